/*
 * A fake libnvidia-ml.so.1 for the topoml SPANK tests.  FAKE_NVML selects
 * the machine: nvswitch8 (8 GPUs, 12 links each to 4 NVSwitches), pairs4
 * (4 GPUs, NVLink pairs 0-2 and 1-3), downlinks (nvswitch8 with every link
 * of GPUs 3 and 7 down), nodriver (nvmlInit fails: driver not loaded).
 * FAKE_NVML_BUSIDS gives the GPUs' PCI bus ids (comma list).  Built a
 * second time with -DFAKE_NO_REMOTE for the "missing symbol" case.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>

struct pci_info {
	char bus_id_legacy[16];
	unsigned int domain, bus, device, pci_device_id, pci_subsystem_id;
	char bus_id[32];
};

static char _bus[16][32];
static int _n;

static const char *_mode(void)
{
	const char *m = getenv("FAKE_NVML");

	return m ? m : "nvswitch8";
}

int nvmlInit_v2(void)
{
	char *list, *tok, *save = NULL;

	if (!strcmp(_mode(), "nodriver"))
		return 9;	/* NVML_ERROR_DRIVER_NOT_LOADED */
	list = strdup(getenv("FAKE_NVML_BUSIDS") ? getenv("FAKE_NVML_BUSIDS") :
		      "0000:12:00.0,0000:13:00.0,0000:22:00.0,0000:23:00.0");
	_n = 0;
	for (tok = strtok_r(list, ",", &save); tok && _n < 16;
	     tok = strtok_r(NULL, ",", &save))
		snprintf(_bus[_n++], sizeof(_bus[0]), "0000%s", tok);
	free(list);
	return 0;
}

int nvmlShutdown(void)
{
	return 0;
}

const char *nvmlErrorString(int r)
{
	return r == 9 ? "Driver Not Loaded" : r ? "Unknown Error" : "Success";
}

int nvmlDeviceGetCount_v2(unsigned int *c)
{
	*c = _n;
	return 0;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void **h)
{
	if ((int)i >= _n)
		return 2;
	*h = (void *)(long)(i + 1);
	return 0;
}

int nvmlDeviceGetPciInfo_v3(void *h, struct pci_info *p)
{
	long i = (long)h - 1;

	memset(p, 0, sizeof(*p));
	snprintf(p->bus_id, sizeof(p->bus_id), "%s", _bus[i]);
	return 0;
}

static bool _switched(void)
{
	return !strcmp(_mode(), "nvswitch8") || !strcmp(_mode(), "downlinks");
}

int nvmlDeviceGetNvLinkState(void *h, unsigned int link, int *state)
{
	long i = (long)h - 1;

	if (_switched()) {
		if (link >= 12)
			return 3;	/* NOT_SUPPORTED */
		*state = !(!strcmp(_mode(), "downlinks") && (i == 3 || i == 7));
		return 0;
	}
	if (link >= 4)
		return 3;
	*state = 1;
	return 0;
}

#ifndef FAKE_NO_REMOTE
int nvmlDeviceGetNvLinkRemotePciInfo_v2(void *h, unsigned int link,
					struct pci_info *p)
{
	long i = (long)h - 1;

	memset(p, 0, sizeof(*p));
	if (_switched()) {
		/* 3 links to each of 4 NVSwitches */
		snprintf(p->bus_id, sizeof(p->bus_id), "00000000:%02x:00.0",
			 0xc0 + link / 3);
		return 0;
	}
	/* pairs: 0-2, 1-3 */
	snprintf(p->bus_id, sizeof(p->bus_id), "%s", _bus[i ^ 2]);
	return 0;
}
#endif
