#include <syn123.h>
