# Host test for lib/acpi.c (RSDP/RSDT/XSDT discovery, MADT, FADT, \_S5).
HOST_SRCS_acpi := lib/acpi.c
