/* The version the kernel reports in its first diagnostic line. */
#define PMUTEST_VERSION "0.1"
