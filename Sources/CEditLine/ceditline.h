#ifndef CEDITLINE_H
#define CEDITLINE_H
#include <stdio.h>
#include <editline/readline.h>
#endif
