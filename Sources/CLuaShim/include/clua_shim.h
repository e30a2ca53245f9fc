#ifndef CLUA_SHIM_H
#define CLUA_SHIM_H
int clua_shim_version(void);
#endif
