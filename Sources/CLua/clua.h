#ifndef CLUA_H
#define CLUA_H
#include <lua.h>
#include <lualib.h>
#include <lauxlib.h>
#endif
