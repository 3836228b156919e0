/*
 * A fake librocm_smi64.so for the topoml SPANK tests.  FAKE_RSMI selects
 * the machine: hive8 (8 GPUs, every pair xGMI: one hive, as MI250X GCDs
 * and MI300X), pairs (xGMI only within pairs 0-1, 2-3, ...: islands of
 * two), pcie (no xGMI), noinit (rsmi_init fails).  FAKE_RSMI_BUSIDS gives
 * the GPUs' PCI bus ids (comma list).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t _bdf[16];
static unsigned _n;

static const char *_mode(void)
{
	const char *m = getenv("FAKE_RSMI");

	return m ? m : "hive8";
}

int rsmi_init(uint64_t flags)
{
	const char *l = getenv("FAKE_RSMI_BUSIDS");
	char *list, *tok, *save = NULL;

	(void)flags;
	if (!strcmp(_mode(), "noinit"))
		return 8;	/* RSMI_STATUS_INIT_ERROR */
	list = strdup(l ? l : "0000:c1:00.0,0000:c6:00.0");
	_n = 0;
	for (tok = strtok_r(list, ",", &save); tok && _n < 16;
	     tok = strtok_r(NULL, ",", &save)) {
		unsigned d, b, v, f;

		if (sscanf(tok, "%x:%x:%x.%x", &d, &b, &v, &f) == 4)
			_bdf[_n++] = (uint64_t)d << 32 | b << 8 | v << 3 | f;
	}
	free(list);
	return 0;
}

int rsmi_shut_down(void)
{
	return 0;
}

int rsmi_status_string(int r, const char **s)
{
	*s = r == 8 ? "RSMI_STATUS_INIT_ERROR" : r ? "RSMI_STATUS_UNKNOWN" :
	     "RSMI_STATUS_SUCCESS";
	return 0;
}

int rsmi_num_monitor_devices(uint32_t *n)
{
	*n = _n;
	return 0;
}

int rsmi_dev_pci_id_get(uint32_t d, uint64_t *bdf)
{
	if (d >= _n)
		return 2;	/* RSMI_STATUS_INVALID_ARGS */
	*bdf = _bdf[d];
	return 0;
}

int rsmi_topo_get_link_type(uint32_t a, uint32_t b, uint64_t *hops,
			    int *type)
{
	if (a >= _n || b >= _n)
		return 2;
	*hops = 1;
	*type = 1;	/* PCIe */
	if (!strcmp(_mode(), "hive8") ||
	    (!strcmp(_mode(), "pairs") && a / 2 == b / 2))
		*type = 2;	/* xGMI */
	return 0;
}
