/* Multiboot1 and multiboot2 header constants (Multiboot spec 0.6.96 §3.1,
 * Multiboot2 spec 1.0 §3.1), shared by the assembly header and C. */
#ifndef BOOT_MULTIBOOT_H
#define BOOT_MULTIBOOT_H

#define MB1_HEADER_MAGIC 0x1badb002
#define MB1_BOOT_MAGIC 0x2badb002 /* in EAX at entry */
#define MB1_FLAG_PAGE_ALIGN (1 << 0)
#define MB1_FLAG_MEMORY_INFO (1 << 1)
#define MB1_FLAG_AOUT_KLUDGE (1 << 16) /* header carries load addresses */

#define MB2_HEADER_MAGIC 0xe85250d6
#define MB2_BOOT_MAGIC 0x36d76289 /* in EAX at entry */
#define MB2_ARCH_I386 0
#define MB2_TAG_END 0
#define MB2_TAG_INFO_REQUEST 1
#define MB2_TAG_FRAMEBUFFER 5
#define MB2_TAG_OPTIONAL 1 /* flags bit 0: loader may ignore the tag */

#endif
