package main

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestFormatVersion(t *testing.T) {
	const rev = "0123456789abcdef0123456789abcdef01234567"
	vcs := func(kv ...string) []debug.BuildSetting {
		var out []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			out = append(out, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return out
	}
	tests := []struct {
		name string
		info *debug.BuildInfo
		want string
	}{
		{"released module", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v1.4.0"},
			Settings: vcs("vcs", "git", "vcs.revision", rev, "vcs.time", "2026-01-02T03:04:05Z", "vcs.modified", "false")},
			"agentwire v1.4.0 (revision " + rev + ", 2026-01-02T03:04:05Z) go1.26.0"},
		{"modified checkout", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v0.0.0-20260102030405-0123456789ab+dirty"},
			Settings: vcs("vcs.revision", rev, "vcs.time", "2026-01-02T03:04:05Z", "vcs.modified", "true")},
			"agentwire v0.0.0-20260102030405-0123456789ab+dirty (revision " + rev + ", modified, 2026-01-02T03:04:05Z) go1.26.0"},
		{"devel without VCS", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}},
			"agentwire (devel) (unknown revision) go1.26.0"},
		{"empty version, revision without time", &debug.BuildInfo{GoVersion: "go1.26.0", Settings: vcs("vcs.revision", rev)},
			"agentwire (devel) (revision " + rev + ") go1.26.0"},
		{"no build info", nil, "agentwire (devel) (unknown revision) unknown Go version"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := formatVersion(tc.info); got != tc.want {
				t.Fatalf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestVersionCommand(t *testing.T) {
	code, out, errs := runCLI(t, "", "version")
	info, _ := debug.ReadBuildInfo()
	if code != 0 || errs != "" || out != formatVersion(info)+"\n" || !strings.HasPrefix(out, "agentwire ") {
		t.Fatalf("exit %d stdout %q stderr %q", code, out, errs)
	}
	if code, _, errs := runCLI(t, "", "version", "x"); code != 2 || !strings.HasPrefix(errs, "agentwire: ") {
		t.Fatalf("extra argument: exit %d stderr %q", code, errs)
	}
}
