/*
 * A fake libnvidia-ml.so.1 for the topoml SPANK tests.  FAKE_NVML selects
 * the machine: nvswitch8 (8 GPUs, 12 links each to 4 NVSwitches), pairs4
 * (4 GPUs, NVLink pairs 0-2 and 1-3), downlinks (nvswitch8 with every link
 * of GPUs 3 and 7 down), nodriver (nvmlInit fails: driver not loaded).
 * FAKE_NVML_BUSIDS gives the GPUs' PCI bus ids (comma list).  Built a
 * second time with -DFAKE_NO_REMOTE for the "missing symbol" case.
 *
 * Faults for --ml-preflight: FAKE_NVML_FAULTS, or the file named by
 * FAKE_NVML_FAULTS_FILE (read at each nvmlInit, so a test changes a
 * running node), holds words G being the GPU's index in the bus id list:
 * missing=G (not enumerated), lost=G (its handle: GPU is lost), ecc=G:N
 * (N uncorrectable errors), retire=G (retired pages pending), remap=G
 * (row remapping pending), thermal=G (hardware thermal slowdown),
 * power=G (power brake), nvlink=G (every link down).
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

enum { F_LOST, F_ECC, F_RETIRE, F_REMAP, F_THERMAL, F_POWER, F_NVLINK,
       F_COUNT };
static long _fault[F_COUNT][16];	/* per GPU: 0 none */
static int _id[16];			/* bus id list index of each device */

static void _faults(int *missing)
{
	static const char *const names[F_COUNT] = {
		"lost", "ecc", "retire", "remap", "thermal", "power", "nvlink"
	};
	const char *file = getenv("FAKE_NVML_FAULTS_FILE");
	char buf[1024] = "", *tok, *save = NULL;
	FILE *f;

	memset(_fault, 0, sizeof(_fault));
	if (file && (f = fopen(file, "r"))) {
		size_t k = fread(buf, 1, sizeof(buf) - 1, f);

		buf[k] = '\0';
		fclose(f);
	} else if (getenv("FAKE_NVML_FAULTS")) {
		snprintf(buf, sizeof(buf), "%s", getenv("FAKE_NVML_FAULTS"));
	}
	for (tok = strtok_r(buf, " ,\n", &save); tok;
	     tok = strtok_r(NULL, " ,\n", &save)) {
		char *eq = strchr(tok, '='), *colon;
		int g;

		if (!eq)
			continue;
		*eq = '\0';
		g = atoi(eq + 1);
		if (g < 0 || g >= 16)
			continue;
		colon = strchr(eq + 1, ':');
		if (!strcmp(tok, "missing"))
			missing[g] = 1;
		for (int k = 0; k < F_COUNT; k++)
			if (!strcmp(tok, names[k]))
				_fault[k][g] = colon ? atol(colon + 1) : 1;
	}
}

static const char *_mode(void)
{
	const char *m = getenv("FAKE_NVML");

	return m ? m : "nvswitch8";
}

int nvmlInit_v2(void)
{
	char *list, *tok, *save = NULL;
	int missing[16] = { 0 }, k = 0;

	if (!strcmp(_mode(), "nodriver"))
		return 9;	/* NVML_ERROR_DRIVER_NOT_LOADED */
	_faults(missing);
	list = strdup(getenv("FAKE_NVML_BUSIDS") ? getenv("FAKE_NVML_BUSIDS") :
		      "0000:12:00.0,0000:13:00.0,0000:22:00.0,0000:23:00.0");
	_n = 0;
	for (tok = strtok_r(list, ",", &save); tok && _n < 16;
	     tok = strtok_r(NULL, ",", &save), k++) {
		if (k < 16 && missing[k])
			continue;	/* fell off the bus */
		_id[_n] = k;
		snprintf(_bus[_n++], sizeof(_bus[0]), "0000%s", tok);
	}
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
	if (_fault[F_LOST][_id[i]])
		return 15;	/* NVML_ERROR_GPU_IS_LOST */
	*h = (void *)(long)(i + 1);
	return 0;
}

/* The GPU's index in FAKE_NVML_BUSIDS, for the faults. */
static int _gpu(void *h)
{
	return _id[(long)h - 1];
}

int nvmlDeviceGetTotalEccErrors(void *h, int type, int counter,
				unsigned long long *count)
{
	(void)counter;
	*count = type == 1 ? (unsigned long long)_fault[F_ECC][_gpu(h)] : 0;
	return 0;
}

int nvmlDeviceGetRetiredPagesPendingStatus(void *h, int *pending)
{
	*pending = _fault[F_RETIRE][_gpu(h)] != 0;
	return 0;
}

int nvmlDeviceGetRemappedRows(void *h, unsigned int *corr, unsigned int *unc,
			      unsigned int *pending, unsigned int *failed)
{
	*corr = *unc = *failed = 0;
	*pending = _fault[F_REMAP][_gpu(h)] != 0;
	return 0;
}

/* 0x1: idle, as a GPU waiting for its job; 0x40 hardware thermal
 * slowdown, 0x80 power brake. */
int nvmlDeviceGetCurrentClocksEventReasons(void *h, unsigned long long *r)
{
	*r = 0x1;
	if (_fault[F_THERMAL][_gpu(h)])
		*r |= 0x40;
	if (_fault[F_POWER][_gpu(h)])
		*r |= 0x80;
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
		*state = !(!strcmp(_mode(), "downlinks") && (i == 3 || i == 7))
			&& !_fault[F_NVLINK][_gpu(h)];
		return 0;
	}
	if (link >= 4)
		return 3;
	*state = !_fault[F_NVLINK][_gpu(h)];
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
