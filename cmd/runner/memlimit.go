package main

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// cgroupShare of the container's memory limit is the guard's default limit: the rest is for
// what the Go heap does not count (goroutine stacks, the binary, the runtime's own memory).
const cgroupShare = 0.9

// memoryLimit is where the memory guard's limit comes from.
type memoryLimit struct {
	bytes int64
	from  string // "--memory-limit", "GOMEMLIMIT", "cgroup" or "" when there is none
}

// resolveMemoryLimit reads --memory-limit (a quantity such as 512Mi; 0 turns the guard off);
// without it, the smaller of GOMEMLIMIT and cgroupShare of the container's cgroup memory limit
// under cgroupRoot. (GOMEMLIMIT set to the whole container limit, as deploy/ does, would let
// the process be killed before the guard acts.)
func resolveMemoryLimit(flag string, flagSet bool, cgroupRoot string) (memoryLimit, error) {
	if flagSet {
		q, err := resource.ParseQuantity(flag)
		if err != nil || q.Sign() < 0 {
			return memoryLimit{}, fmt.Errorf("--memory-limit %q is not a memory size such as 512Mi or 2G (0 turns the guard off)", flag)
		}
		return memoryLimit{bytes: q.Value(), from: "--memory-limit"}, nil
	}
	var m memoryLimit
	if _, ok := os.LookupEnv("GOMEMLIMIT"); ok {
		if n := debug.SetMemoryLimit(-1); n != math.MaxInt64 {
			m = memoryLimit{bytes: n, from: "GOMEMLIMIT"}
		}
	}
	n, err := cgroupMemoryLimit(cgroupRoot)
	if err != nil {
		return memoryLimit{}, err
	}
	if c := int64(cgroupShare * float64(n)); c > 0 && (m.bytes == 0 || c < m.bytes) {
		m = memoryLimit{bytes: c, from: "cgroup"}
	}
	return m, nil
}

// cgroupMemoryLimit reads the cgroup v2 memory.max, else v1's memory.limit_in_bytes; 0 when
// there is no limit or no cgroup file.
func cgroupMemoryLimit(root string) (int64, error) {
	for _, path := range []string{root + "/memory.max", root + "/memory/memory.limit_in_bytes"} {
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("read memory limit: %w", err)
		}
		s := strings.TrimSpace(string(data))
		if s == "max" {
			return 0, nil
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("read memory limit %s: %w", path, err)
		}
		if n >= math.MaxInt64/2 { // cgroup v1 says "unlimited" with a page-rounded MaxInt64
			return 0, nil
		}
		return n, nil
	}
	return 0, nil
}

// apply makes the limit the Go runtime's soft limit too, unless that is lower already: the
// collector then works harder near the limit before the guard blames a script.
func (m memoryLimit) apply() {
	if m.bytes > 0 && m.bytes < debug.SetMemoryLimit(-1) {
		debug.SetMemoryLimit(m.bytes)
	}
}
