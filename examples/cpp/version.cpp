// Prints the prollystore library version from C++: the header is usable from both languages.
#include <cstdio>
#include <string>
#include "prollystore.h"

int main() {
    std::string v = prolly_version();
    if (v.empty()) {
        std::fprintf(stderr, "prolly_version returned nothing\n");
        return 1;
    }
    std::printf("prollystore %s (C++)\n", v.c_str());
    return 0;
}
