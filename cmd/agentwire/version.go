package main

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

func init() { register(newVersionCmd) }

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the module version, the source revision it was built from and the Go version",
		Long: `Print one line: agentwire, the module version ("(devel)" for a build from a checkout
without a version), in parentheses the VCS revision it was built from (with ", modified" for
a working tree with changes, and the commit time) or "unknown revision" when the build
recorded none (go build -buildvcs=false, go run, a build outside the repository), and the Go
version.`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			info, _ := debug.ReadBuildInfo()
			_, err := fmt.Fprintln(cmd.OutOrStdout(), formatVersion(info))
			return err
		},
	}
}

// formatVersion renders build information (nil when the binary carries none) as the one line
// of `agentwire version`.
func formatVersion(info *debug.BuildInfo) string {
	version, goVersion := "(devel)", "unknown Go version"
	var revision, when string
	modified := false
	if info != nil {
		if info.Main.Version != "" {
			version = info.Main.Version
		}
		if info.GoVersion != "" {
			goVersion = info.GoVersion
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	rev := "unknown revision"
	if revision != "" {
		parts := []string{"revision " + revision}
		if modified {
			parts = append(parts, "modified")
		}
		if when != "" {
			parts = append(parts, when)
		}
		rev = strings.Join(parts, ", ")
	}
	return fmt.Sprintf("agentwire %s (%s) %s", version, rev, goVersion)
}
