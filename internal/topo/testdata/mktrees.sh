#!/bin/sh
# Writes the synthetic sysfs trees of this directory (only the files package
# topo reads), and the copy of the build machine's files with -host.
# Run from this directory: sh mktrees.sh [-host]
set -eu

put() { # put FILE CONTENT
	mkdir -p "$(dirname "$1")"
	printf '%s\n' "$2" >"$1"
}

# mask LIST prints the kernel's mask format of a list ("0-3,8" -> 0000010f),
# which the kernel writes beside each list and hwloc reads.
mask() {
	printf '%s\n' "$1" | awk -F, '{
		n = 0
		for (i = 1; i <= NF; i++) {
			split($i, r, "-"); lo = r[1]; hi = (r[2] == "" ? lo : r[2])
			for (c = lo; c <= hi; c++) { w = int(c / 32); bit[w, c % 32] = 1; if (w + 1 > n) n = w + 1 }
		}
		out = ""
		for (w = n - 1; w >= 0; w--) {
			v = 0
			for (b = 31; b >= 0; b--) v = v * 2 + ((w, b) in bit)
			out = out sprintf("%08x", v) (w ? "," : "")
		}
		print out
	}'
}

putlist() { # putlist DIR LISTNAME MASKNAME LIST
	put "$1/$2" "$4"
	put "$1/$3" "$(mask "$4")"
}

cpu() { # cpu TREE ID PKG CORE_ID PKG_LIST CORE_LIST
	d=$1/sys/devices/system/cpu/cpu$2/topology
	put "$d/physical_package_id" "$3"
	put "$d/core_id" "$4"
	putlist "$d" package_cpus_list package_cpus "$5"
	putlist "$d" core_cpus_list core_cpus "$6"
}

cache() { # cache TREE CPU INDEX LEVEL TYPE ID SHARED_LIST
	d=$1/sys/devices/system/cpu/cpu$2/cache/index$3
	put "$d/level" "$4"
	put "$d/type" "$5"
	put "$d/id" "$6"
	putlist "$d" shared_cpu_list shared_cpu_map "$7"
}

node() { # node TREE N CPULIST
	putlist "$1/sys/devices/system/node/node$2" cpulist cpumap "$3"
}

# 2 sockets x 4 cores x SMT2, sub-NUMA clustering: 2 NUMA nodes per
# socket, one L3 per socket (so an L3 spans two NUMA nodes), L2 per core.
# Intel numbering: CPUs 0-7 are first threads, 8-15 their siblings.
two_socket() {
	t=$1
	rm -rf "$t"
	put "$t/sys/devices/system/cpu/online" "0-15"
	for c in 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do
		core=$((c % 8))
		pkg=$((core / 4))
		if [ $pkg = 0 ]; then pl="0-3,8-11"; else pl="4-7,12-15"; fi
		cpu "$t" $c $pkg $((core % 4)) "$pl" "$core,$((core + 8))"
		cache "$t" $c 2 2 Unified "$core" "$core,$((core + 8))"
		cache "$t" $c 3 3 Unified "$pkg" "$pl"
	done
	node "$t" 0 "0-1,8-9"
	node "$t" 1 "2-3,10-11"
	node "$t" 2 "4-5,12-13"
	node "$t" 3 "6-7,14-15"
	put "$t/status" "Cpus_allowed_list:	0-15"
}

# 1 socket x 16 cores x SMT2 in NPS4 mode: 4 NUMA nodes of 4 cores, and an
# L3 per 2-core complex, so each NUMA node holds two L3s. AMD numbering:
# CPUs 0-15 first threads, 16-31 siblings.
four_numa() {
	t=$1
	rm -rf "$t"
	put "$t/sys/devices/system/cpu/online" "0-31"
	for c in $(seq 0 31); do
		core=$((c % 16))
		sib="$core,$((core + 16))"
		l3=$((core / 2))
		cpu "$t" $c 0 $core "0-31" "$sib"
		cache "$t" $c 2 2 Unified "$core" "$sib"
		cache "$t" $c 3 3 Unified "$l3" "$((2 * l3))-$((2 * l3 + 1)),$((2 * l3 + 16))-$((2 * l3 + 17))"
	done
	for n in 0 1 2 3; do
		node "$t" $n "$((4 * n))-$((4 * n + 3)),$((4 * n + 16))-$((4 * n + 19))"
	done
	put "$t/status" "Cpus_allowed_list:	0-31"
}

# The four-NUMA part seen from a container whose cpuset is cores 4-11
# (NUMA nodes 1 and 2) with both their threads; sysfs shows every CPU, so
# the tree's sys is the four-NUMA tree's.
container() {
	rm -rf "$1"
	mkdir -p "$1"
	ln -s ../fournuma/sys "$1/sys"
	put "$1/status" "Cpus_allowed:	0ff00ff0
Cpus_allowed_list:	4-11,20-27"
}

# A VM: no cpu/online file (the cpuN directories say), cpu3 offline, ids
# with a gap (cpu8, cpu9), an old kernel's topology (only
# physical_package_id and core_id), no cache and no node directory.
vm() {
	t=$1
	rm -rf "$t"
	for c in 0 1 2 3 4; do
		d=$t/sys/devices/system/cpu/cpu$c/topology
		put "$d/physical_package_id" 0
		put "$d/core_id" $c
	done
	put "$t/sys/devices/system/cpu/cpu3/online" 0
	put "$t/sys/devices/system/cpu/cpu1/online" 1
	for c in 8 9; do
		d=$t/sys/devices/system/cpu/cpu$c/topology
		put "$d/physical_package_id" 1
		put "$d/core_id" 0
	done
	put "$t/status" "Cpus_allowed:	3ff"
}

# Copies this machine's files that topo reads, and lstopo's view of it.
host() {
	t=$1
	rm -rf "$t"
	for f in /sys/devices/system/cpu/online \
		/sys/devices/system/cpu/cpu[0-9]*/online \
		/sys/devices/system/cpu/cpu[0-9]*/topology/physical_package_id \
		/sys/devices/system/cpu/cpu[0-9]*/topology/core_id \
		/sys/devices/system/cpu/cpu[0-9]*/topology/package_cpus_list \
		/sys/devices/system/cpu/cpu[0-9]*/topology/core_cpus_list \
		/sys/devices/system/cpu/cpu[0-9]*/cache/index[0-9]*/level \
		/sys/devices/system/cpu/cpu[0-9]*/cache/index[0-9]*/type \
		/sys/devices/system/cpu/cpu[0-9]*/cache/index[0-9]*/id \
		/sys/devices/system/cpu/cpu[0-9]*/cache/index[0-9]*/shared_cpu_list \
		/sys/devices/system/node/node[0-9]*/cpulist; do
		[ -r "$f" ] || continue
		mkdir -p "$t/$(dirname "$f")"
		cat "$f" >"$t/$f"
	done
	grep '^Cpus_allowed' /proc/self/status >"$t/status"
	lstopo-no-graphics --of xml >"$t/lstopo.xml"
}

# lstopo TREE [RESTRICT] writes hwloc's view of a fake tree, the reference
# the tests compare with.
lstopo() {
	HWLOC_FSROOT=$PWD/$1 HWLOC_COMPONENTS=linux,-x86 lstopo-no-graphics --of xml ${2:+--restrict "$2"} >"$1/lstopo.xml"
}

if [ "${1:-}" = -host ]; then
	host host
	exit
fi
two_socket twosocket
four_numa fournuma
container container
vm vm
lstopo twosocket
lstopo fournuma
lstopo container 0x0ff00ff0

