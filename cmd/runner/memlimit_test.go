package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestResolveMemoryLimit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		flag    string
		flagSet bool
		files   map[string]string // under the cgroup root
		want    memoryLimit
		wantErr bool
	}{
		{name: "flag", flag: "512Mi", flagSet: true, want: memoryLimit{bytes: 512 << 20, from: "--memory-limit"}},
		{name: "flag wins over the cgroup", flag: "1G", flagSet: true, files: map[string]string{"memory.max": "2147483648\n"},
			want: memoryLimit{bytes: 1e9, from: "--memory-limit"}},
		{name: "zero turns the guard off", flag: "0", flagSet: true, want: memoryLimit{from: "--memory-limit"}},
		{name: "negative", flag: "-1Gi", flagSet: true, wantErr: true},
		{name: "not a size", flag: "lots", flagSet: true, wantErr: true},
		{name: "cgroup v2", files: map[string]string{"memory.max": "1073741824\n"}, want: memoryLimit{bytes: 966367641, from: "cgroup"}},
		{name: "cgroup v2 without a limit", files: map[string]string{"memory.max": "max\n"}},
		{name: "cgroup v1", files: map[string]string{"memory/memory.limit_in_bytes": "1073741824\n"}, want: memoryLimit{bytes: 966367641, from: "cgroup"}},
		{name: "cgroup v1 without a limit", files: map[string]string{"memory/memory.limit_in_bytes": "9223372036854771712\n"}},
		{name: "no cgroup files"},
		{name: "unreadable limit", files: map[string]string{"memory.max": "garbage"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			for name, content := range tt.files {
				path := filepath.Join(root, name)
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := resolveMemoryLimit(tt.flag, tt.flagSet, root)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Fatalf("resolveMemoryLimit = %+v, %v; want %+v, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}
