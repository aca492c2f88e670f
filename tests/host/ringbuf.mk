# Host build of the ring buffer tests and benchmark (see tests/host/test_ringbuf.c).
HOST_SRCS_ringbuf := lib/ringbuf.c
HOST_LDFLAGS_ringbuf := -pthread
# The benchmark wants -O2 and no sanitizers (it says so in its row if built
# with ASan); it needs neither -DPMUTEST_HOST nor -pthread.
HOST_BENCH_SRCS_ringbuf := lib/ringbuf.c
