package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// userHZ is the unit of the CPU times in /proc/PID/stat; Linux fixes it at 100 for
// user space whatever the kernel's own tick rate.
const userHZ = 100

// groupCPU is the CPU time (user+sys) spent so far by process group pgid: each living
// member's own time plus what it has reaped of its children. A living process's children
// are members too (a phase's tree shares its group), and a reaped child no longer appears
// in /proc, so nothing is counted twice.
//
// It exists for the phase that is stopped: SIGTERM ends its shell before the shell reaps
// the tools below it, so the shell's rusage, which Wait reports, misses their time. Read
// just before the signal, the group still holds them. It returns 0 where /proc cannot be
// read, which leaves the rusage as the figure.
func groupCPU(pgid int) time.Duration {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var ticks int64
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // the process ended since the glob
		}
		if group, t, ok := parseStat(b); ok && group == pgid {
			ticks += t
		}
	}
	return time.Duration(ticks) * time.Second / userHZ
}

// parseStat reads a /proc/PID/stat line's process group and its utime+stime+cutime+cstime.
// The fields are counted after the command name's closing parenthesis: the name itself may
// hold spaces and parentheses.
func parseStat(b []byte) (pgid int, ticks int64, ok bool) {
	end := bytes.LastIndexByte(b, ')')
	if end < 0 {
		return 0, 0, false
	}
	f := bytes.Fields(b[end+1:])
	// f[0] is field 3 (state): pgrp is field 5, utime..cstime are fields 14–17.
	if len(f) < 15 {
		return 0, 0, false
	}
	pgid, err := strconv.Atoi(string(f[2]))
	if err != nil {
		return 0, 0, false
	}
	for _, s := range f[11:15] {
		n, err := strconv.ParseInt(string(s), 10, 64)
		if err != nil {
			return 0, 0, false
		}
		ticks += n
	}
	return pgid, ticks, true
}
