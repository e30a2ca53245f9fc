#include "clua_shim.h"
int clua_shim_version(void) { return 1; }
