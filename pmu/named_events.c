/* The named events (enum pmu_arch_event: perf's names, numbered by the
 * CPUID.0AH:EBX availability bits) and their default encodings, from the
 * table of the backend that defines the architectural PMU (its arch). */
#include "pmu/pmu_internal.h"

#include "lib/string.h"

const struct pmu_arch_event_desc *pmu_arch_event_table(void)
{
	const struct pmu_arch_defs *a = pmu_backend_arch();

	return a ? a->events : NULL;
}

const struct pmu_arch_event_desc *pmu_arch_event(enum pmu_arch_event e)
{
	const struct pmu_arch_event_desc *t = pmu_arch_event_table();

	if (!t || (int)e < 0 || e >= PMU_ARCH_NR)
		return NULL;
	return &t[e];
}

const char *pmu_arch_event_name(enum pmu_arch_event e)
{
	const struct pmu_arch_event_desc *d = pmu_arch_event(e);

	return d ? d->name : "?";
}

enum pmu_arch_event pmu_arch_event_by_name(const char *name)
{
	for (int e = 0; e < PMU_ARCH_NR; e++)
		if (pmu_arch_event((enum pmu_arch_event)e) &&
		    strcmp(pmu_arch_event((enum pmu_arch_event)e)->name, name) == 0)
			return (enum pmu_arch_event)e;
	return PMU_ARCH_NONE;
}

enum pmu_arch_event pmu_arch_event_by_code(uint8_t event, uint8_t umask)
{
	for (int e = 0; e < PMU_ARCH_NR; e++) {
		const struct pmu_arch_event_desc *d = pmu_arch_event((enum pmu_arch_event)e);
		if (d && d->event == event && d->umask == umask)
			return (enum pmu_arch_event)e;
	}
	return PMU_ARCH_NONE;
}

enum pmu_arch_event pmu_arch_event_of_fixed(unsigned i)
{
	for (int e = 0; e < PMU_ARCH_NR; e++) {
		const struct pmu_arch_event_desc *d = pmu_arch_event((enum pmu_arch_event)e);
		if (d && d->fixed >= 0 && (unsigned)d->fixed == i)
			return (enum pmu_arch_event)e;
	}
	return PMU_ARCH_NONE;
}
