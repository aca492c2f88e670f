# Host test for arch/x86/acpi.c (RSDP/RSDT/XSDT discovery, MADT, FADT, \_S5).
HOST_SRCS_acpi := arch/x86/acpi.c
