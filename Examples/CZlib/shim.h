// The system zlib, which every Swift-on-Linux install already carries (Foundation links it).
#include <zlib.h>
