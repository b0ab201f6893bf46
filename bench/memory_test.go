package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/agentwire/agentwire/events/synth"
	"github.com/agentwire/agentwire/relay"
	"github.com/agentwire/agentwire/sqlite"
)

// BenchmarkMemory measures what a relay keeps in memory after ingesting 20 finished runs of
// 100,000 events each (events/synth, default profile, batches of 1,000 through Server.Append
// over a real SQLite store): the Go heap in use and the process's resident set after a GC
// that returns freed memory to the OS, with the state cache's own accounting. One op is the
// whole ingest. The sub-benchmarks compare the byte-bounded cache at its default (256 MiB)
// with an unbounded one (what the old 256-run bound amounted to for 20 runs). Run each alone
// for a clean resident figure (an earlier sub-benchmark's pages may stay mapped):
//
//	go test -run '^$' -bench 'Memory/cache=256MiB' -benchtime 1x ./bench
func BenchmarkMemory(b *testing.B) {
	for _, c := range []struct {
		name  string
		cache int64
	}{{"256MiB", 0}, {"unbounded", 1 << 50}} {
		b.Run("cache="+c.name, func(b *testing.B) {
			const runs, perRun, batch = 20, 100000, 1000
			for range b.N {
				b.StopTimer()
				dir := b.TempDir()
				st, err := sqlite.Open(filepath.Join(dir, sqlite.DefaultFileName), sqlite.Options{})
				if err != nil {
					b.Fatal(err)
				}
				srv, err := relay.New(relay.Config{Store: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), StateCache: c.cache})
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				for r := range runs {
					run := "mem-" + strconv.Itoa(r)
					data, err := synth.BytesWith(perRun, int64(r+1), synth.Options{RunID: run})
					if err != nil {
						b.Fatal(err)
					}
					lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
					for i := 0; i < len(lines); i += batch {
						if _, e := srv.Append(context.Background(), relay.LocalOrg, run, lines[i:min(i+batch, len(lines))]); e != nil {
							b.Fatal(e)
						}
					}
				}
				b.StopTimer()
				if err := srv.FlushCheckpoints(context.Background()); err != nil {
					b.Fatal(err)
				}
				debug.FreeOSMemory()
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				b.ReportMetric(float64(m.HeapInuse)/(1<<20), "heap-MB")
				b.ReportMetric(residentMB(b), "rss-MB")
				_ = srv.Shutdown(context.Background())
				_ = st.Close()
				b.StartTimer()
			}
		})
	}
}

// residentMB reads VmRSS from /proc/self/status (Linux), 0 elsewhere.
func residentMB(b *testing.B) float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			var kb float64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%g kB", &kb); err != nil {
				b.Fatal(err)
			}
			return kb / 1024
		}
	}
	return 0
}
