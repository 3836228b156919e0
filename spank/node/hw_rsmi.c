/*
 * xGMI islands of AMD GPUs from ROCm SMI, loaded with dlopen() at run
 * time (no link dependency on ROCm).  Only the few declarations used
 * here, written from ROCm SMI's documented ABI (not AMD's header).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw.h"

typedef int rsmi_status_t;
#define RSMI_STATUS_SUCCESS	0
#define RSMI_IOLINK_TYPE_XGMI	2	/* RSMI_IO_LINK_TYPE */

struct rsmi_api {
	rsmi_status_t (*init)(uint64_t);
	rsmi_status_t (*shut_down)(void);
	rsmi_status_t (*count)(uint32_t *);
	rsmi_status_t (*pci_id)(uint32_t, uint64_t *);
	rsmi_status_t (*link_type)(uint32_t, uint32_t, uint64_t *, int *);
	rsmi_status_t (*status_string)(rsmi_status_t, const char **);
};

static const char *_rsmi_err(struct rsmi_api *api, rsmi_status_t r)
{
	static char buf[32];
	const char *s = NULL;

	if (api->status_string && !api->status_string(r, &s) && s)
		return s;
	snprintf(buf, sizeof(buf), "ROCm SMI error %d", r);
	return buf;
}

int hw_rsmi_islands(struct hw_node *n, const char *libpath, char *err,
		    size_t errlen)
{
	struct rsmi_api api = { 0 };
	uint32_t count = 0;
	int rc = -1, *map = NULL, *up = NULL;
	bool inited = false;
	rsmi_status_t r;
	void *lib;

	if (!libpath || !*libpath)
		libpath = "librocm_smi64.so";
	if (!(lib = dlopen(libpath, RTLD_NOW | RTLD_LOCAL))) {
		snprintf(err, errlen, "ROCm SMI not available (%s)", dlerror());
		return -1;
	}
#define SYM(field, name) \
	do { \
		*(void **)&api.field = dlsym(lib, name); \
		if (!api.field) { \
			snprintf(err, errlen, "%s: symbol %s missing", \
				 libpath, name); \
			goto out; \
		} \
	} while (0)
	*(void **)&api.status_string = dlsym(lib, "rsmi_status_string");
	SYM(init, "rsmi_init");
	SYM(shut_down, "rsmi_shut_down");
	SYM(count, "rsmi_num_monitor_devices");
	SYM(pci_id, "rsmi_dev_pci_id_get");
	SYM(link_type, "rsmi_topo_get_link_type");
#undef SYM
	if ((r = api.init(0)) != RSMI_STATUS_SUCCESS) {
		snprintf(err, errlen, "rsmi_init: %s", _rsmi_err(&api, r));
		goto out;
	}
	inited = true;
	if ((r = api.count(&count)) != RSMI_STATUS_SUCCESS) {
		snprintf(err, errlen, "rsmi_num_monitor_devices: %s",
			 _rsmi_err(&api, r));
		goto out;
	}
	map = malloc(sizeof(int) * (count + 1));
	up = malloc(sizeof(int) * (n->ngpus + 1));
	if (!map || !up) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (int i = 0; i < n->ngpus; i++)
		up[i] = i;
	/* BDF id: domain << 32 | bus << 8 | device << 3 | function. */
	for (uint32_t d = 0; d < count; d++) {
		uint64_t bdf = 0;
		char b[HW_BUSID_LEN];

		map[d] = -1;
		if (api.pci_id(d, &bdf) != RSMI_STATUS_SUCCESS)
			continue;
		snprintf(b, sizeof(b), "%04x:%02x:%02x.%x",
			 (unsigned)(bdf >> 32) & 0xffff,
			 (unsigned)(bdf >> 8) & 0xff,
			 (unsigned)(bdf >> 3) & 0x1f, (unsigned)bdf & 7);
		map[d] = hw_gpu_by_busid(n, b);
	}
	for (uint32_t a = 0; a < count; a++)
		for (uint32_t b = a + 1; b < count; b++) {
			uint64_t hops = 0;
			int type = 0;

			if (map[a] < 0 || map[b] < 0 ||
			    api.link_type(a, b, &hops, &type) !=
				RSMI_STATUS_SUCCESS ||
			    type != RSMI_IOLINK_TYPE_XGMI)
				continue;
			hw_uf_union(up, map[a], map[b]);
		}
	hw_islands_number(n, up);
	n->nvml = true;
	rc = 0;
out:
	if (inited)
		api.shut_down();
	free(map);
	free(up);
	dlclose(lib);
	return rc;
}
