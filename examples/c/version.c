/* Prints the prollystore library version: the smallest program that links the C API. */
#include <stdio.h>
#include "prollystore.h"

int main(void) {
    const char *v = prolly_version();
    if (v == NULL || v[0] == '\0') {
        fprintf(stderr, "prolly_version returned nothing\n");
        return 1;
    }
    printf("prollystore %s\n", v);
    return 0;
}
