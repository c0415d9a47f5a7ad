package main

import (
	"debug/elf"
	"fmt"
)

// goarch names the ELF machines the image can be built for as GOARCH does: the two that
// Kubernetes nodes commonly run.
var goarch = map[elf.Machine]string{
	elf.EM_X86_64:  "amd64",
	elf.EM_AARCH64: "arm64",
}

// staticLinuxArch returns the GOARCH of a statically linked Linux executable, and an error for
// anything else: a dynamically linked binary needs a C library the image does not have.
func staticLinuxArch(path string) (string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", fmt.Errorf("read binary %s (build it with GOOS=linux): %w", path, err)
	}
	defer func() { _ = f.Close() }()
	if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		return "", fmt.Errorf("read binary %s: ELF type %s is not an executable", path, f.Type)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return "", fmt.Errorf("read binary %s: dynamically linked; build it with CGO_ENABLED=0", path)
		}
	}
	arch, ok := goarch[f.Machine]
	if !ok {
		return "", fmt.Errorf("read binary %s: unsupported machine %s", path, f.Machine)
	}
	return arch, nil
}
