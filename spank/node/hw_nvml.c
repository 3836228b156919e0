/*
 * NVLink islands from NVML, loaded with dlopen() at run time so the plugin
 * has no link dependency on the driver.  Only the few declarations used
 * here, written from NVML's documented ABI (not NVIDIA's header).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw.h"

typedef int nvml_return_t;		/* nvmlReturn_t */
typedef struct nvml_device *nvml_device_t;
#define NVML_SUCCESS			0
#define NVML_ERROR_DRIVER_NOT_LOADED	9
#define NVML_FEATURE_ENABLED		1
#define NVML_NVLINK_MAX_LINKS		18

/* nvmlPciInfo_t as returned by the _v3 / _v2 entry points. */
struct nvml_pci_info {
	char bus_id_legacy[16];
	unsigned int domain;
	unsigned int bus;
	unsigned int device;
	unsigned int pci_device_id;
	unsigned int pci_subsystem_id;
	char bus_id[32];
};

struct nvml_api {
	nvml_return_t (*init)(void);
	nvml_return_t (*shutdown)(void);
	nvml_return_t (*count)(unsigned int *);
	nvml_return_t (*handle)(unsigned int, nvml_device_t *);
	nvml_return_t (*pci)(nvml_device_t, struct nvml_pci_info *);
	nvml_return_t (*link_state)(nvml_device_t, unsigned int, int *);
	nvml_return_t (*remote_pci)(nvml_device_t, unsigned int,
				    struct nvml_pci_info *);
	const char *(*error_string)(nvml_return_t);
};

static const char *_nvml_err(struct nvml_api *api, nvml_return_t r)
{
	static char buf[32];

	if (api->error_string)
		return api->error_string(r);
	snprintf(buf, sizeof(buf), "NVML error %d", r);
	return buf;
}

/*
 * NVML from LIBPATH (default the driver's), its device functions in API
 * (nvmlDeviceGetNvLinkRemotePciInfo too when REMOTE), initialised, and
 * its device count: the library's handle, to nvmlShutdown and dlclose
 * when done; NULL with why.
 */
static void *_nvml_open(const char *libpath, struct nvml_api *api,
			bool remote, unsigned int *count, char *err,
			size_t errlen)
{
	nvml_return_t r;
	void *lib;

	if (!libpath || !*libpath)
		libpath = "libnvidia-ml.so.1";
	if (!(lib = dlopen(libpath, RTLD_NOW | RTLD_LOCAL))) {
		snprintf(err, errlen, "NVML not available (%s)", dlerror());
		return NULL;
	}
#define SYM(field, name) \
	do { \
		*(void **)&api->field = dlsym(lib, name); \
		if (!api->field) { \
			snprintf(err, errlen, "%s: symbol %s missing", \
				 libpath, name); \
			goto fail; \
		} \
	} while (0)
	*(void **)&api->error_string = dlsym(lib, "nvmlErrorString");
	SYM(init, "nvmlInit_v2");
	SYM(shutdown, "nvmlShutdown");
	SYM(count, "nvmlDeviceGetCount_v2");
	SYM(handle, "nvmlDeviceGetHandleByIndex_v2");
	SYM(pci, "nvmlDeviceGetPciInfo_v3");
	SYM(link_state, "nvmlDeviceGetNvLinkState");
	if (remote)
		SYM(remote_pci, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
#undef SYM
	if ((r = api->init()) != NVML_SUCCESS) {
		snprintf(err, errlen, "nvmlInit: %s%s", _nvml_err(api, r),
			 r == NVML_ERROR_DRIVER_NOT_LOADED ?
			 " (driver not loaded)" : "");
		goto fail;
	}
	if ((r = api->count(count)) != NVML_SUCCESS) {
		snprintf(err, errlen, "nvmlDeviceGetCount: %s",
			 _nvml_err(api, r));
		api->shutdown();
		goto fail;
	}
	return lib;
fail:
	dlclose(lib);
	return NULL;
}


int hw_nvml_islands(struct hw_node *n, const char *libpath, char *err,
		    size_t errlen)
{
	struct nvml_api api = { 0 };
	void *lib;
	unsigned int count = 0;
	int rc = -1, nremote = 0, maxremote, *up = NULL, *map = NULL;
	char (*remote)[HW_BUSID_LEN] = NULL;

	if (!(lib = _nvml_open(libpath, &api, true, &count, err, errlen)))
		return -1;
	maxremote = count * NVML_NVLINK_MAX_LINKS + 1;
	up = malloc(sizeof(int) * (n->ngpus + maxremote));
	map = malloc(sizeof(int) * (count + 1));
	remote = calloc(maxremote, sizeof(*remote));
	if (!up || !map || !remote) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (int i = 0; i < n->ngpus + maxremote; i++)
		up[i] = i;
	for (unsigned d = 0; d < count; d++) {
		nvml_device_t h;
		struct nvml_pci_info pi;

		map[d] = -1;
		if (api.handle(d, &h) != NVML_SUCCESS ||
		    api.pci(h, &pi) != NVML_SUCCESS)
			continue;
		map[d] = hw_gpu_by_busid(n, pi.bus_id);
	}
	for (unsigned d = 0; d < count; d++) {
		nvml_device_t h;

		if (map[d] < 0 || api.handle(d, &h) != NVML_SUCCESS)
			continue;
		for (unsigned l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
			struct nvml_pci_info pi;
			char b[HW_BUSID_LEN];
			int state = 0, peer, k;

			if (api.link_state(h, l, &state) != NVML_SUCCESS ||
			    state != NVML_FEATURE_ENABLED ||
			    api.remote_pci(h, l, &pi) != NVML_SUCCESS ||
			    hw_busid_normalize(pi.bus_id, b, sizeof(b)))
				continue;
			if ((peer = hw_gpu_by_busid(n, b)) >= 0) {
				hw_uf_union(up, map[d], peer);
				continue;
			}
			/* An NVSwitch (or a GPU outside the model): every GPU
			 * linked to it shares the island. */
			for (k = 0; k < nremote; k++)
				if (!strcmp(remote[k], b))
					break;
			if (k == nremote && nremote < maxremote)
				snprintf(remote[nremote++], HW_BUSID_LEN, "%s", b);
			if (k < maxremote)
				hw_uf_union(up, map[d], n->ngpus + k);
		}
	}
	/* Union-find over GPUs plus one slot per remote endpoint
	 * (NVSwitch): GPUs joined through a switch share its island. */
	hw_islands_number(n, up);
	n->nvml = true;
	rc = 0;
out:
	api.shutdown();
	free(up);
	free(map);
	free(remote);
	dlclose(lib);
	return rc;
}

/*
 * --ml-preflight: each GPU as NVML sees it now.  The counters beyond the
 * device list are looked up one by one: a driver without one (page
 * retirement is gone on Ampere, row remapping new with it; "clocks event
 * reasons" is the newer name of "clocks throttle reasons") leaves that
 * check unknown rather than failing the node.
 */
#define NVML_MEMORY_ERROR_UNCORRECTED	1
#define NVML_VOLATILE_ECC		0

struct nvml_health_api {
	struct nvml_api base;
	nvml_return_t (*ecc)(nvml_device_t, int, int, unsigned long long *);
	nvml_return_t (*retired)(nvml_device_t, int *);
	nvml_return_t (*remap)(nvml_device_t, unsigned int *, unsigned int *,
			       unsigned int *, unsigned int *);
	nvml_return_t (*clocks)(nvml_device_t, unsigned long long *);
};

static void _gpu_health(struct nvml_health_api *a, unsigned d,
			struct hw_gpu_health *g)
{
	unsigned long long v = 0;
	unsigned int corr = 0, unc = 0, pend = 0, fail = 0;
	struct nvml_pci_info pi;
	nvml_device_t h;
	int state = 0;
	nvml_return_t r;

	memset(g, 0, sizeof(*g));
	g->index = (int)d;
	g->ecc_unc = g->clocks = -1;
	g->retire_pending = g->remap_pending = g->remap_failed = -1;
	if ((r = a->base.handle(d, &h)) != NVML_SUCCESS ||
	    (r = a->base.pci(h, &pi)) != NVML_SUCCESS) {
		g->lost = r;
		return;
	}
	if (hw_busid_normalize(pi.bus_id, g->busid, sizeof(g->busid)))
		g->busid[0] = '\0';
	if (a->ecc && a->ecc(h, NVML_MEMORY_ERROR_UNCORRECTED,
			     NVML_VOLATILE_ECC, &v) == NVML_SUCCESS)
		g->ecc_unc = v > (unsigned long long)1 << 62 ? 1LL << 62 :
			(long long)v;
	if (a->retired && a->retired(h, &state) == NVML_SUCCESS)
		g->retire_pending = state != 0;
	if (a->remap && a->remap(h, &corr, &unc, &pend, &fail) ==
	    NVML_SUCCESS) {
		g->remap_pending = pend != 0;
		g->remap_failed = fail != 0;
	}
	if (a->clocks && a->clocks(h, &v) == NVML_SUCCESS)
		g->clocks = (long long)(v & 0x7fffffffffffffffULL);
	for (unsigned l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
		if (a->base.link_state(h, l, &state) != NVML_SUCCESS)
			continue;
		g->links++;
		if (state == NVML_FEATURE_ENABLED)
			g->links_up++;
	}
}

int hw_nvml_health(const char *libpath, struct hw_gpu_health *out, int max,
		   int *n, char *err, size_t errlen)
{
	struct nvml_health_api a = { 0 };
	unsigned int count = 0;
	void *lib;

	*n = 0;
	if (!(lib = _nvml_open(libpath, &a.base, false, &count, err,
			       errlen)))
		return -1;
	*(void **)&a.ecc = dlsym(lib, "nvmlDeviceGetTotalEccErrors");
	*(void **)&a.retired = dlsym(lib,
				     "nvmlDeviceGetRetiredPagesPendingStatus");
	*(void **)&a.remap = dlsym(lib, "nvmlDeviceGetRemappedRows");
	*(void **)&a.clocks = dlsym(lib,
				    "nvmlDeviceGetCurrentClocksEventReasons");
	if (!a.clocks)
		*(void **)&a.clocks = dlsym(lib,
			"nvmlDeviceGetCurrentClocksThrottleReasons");
	for (unsigned d = 0; d < count && *n < max; d++)
		_gpu_health(&a, d, &out[(*n)++]);
	a.base.shutdown();
	dlclose(lib);
	return 0;
}
