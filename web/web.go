// Package web is the relay's viewer (viewer.md): plain HTML, CSS and JavaScript modules and the
// Go events reducer compiled to WebAssembly, embedded in the binary and served by
// `agentwire serve` next to the API. The pages read only the public relay API (relay.md §2).
//
// # Serving
//
// [Handler] answers the HTML shell for every viewer URL (`/`, `/runs/{runId}`, `/open`, `/bus`,
// `/notifications`; the page routes on the client) and the assets under `/assets/`. The shell
// is never cached (`Cache-Control: no-store`); an asset's name carries a hash of its content
// (`app.3f9c2a1b7e0d.js`), so it is cached for a year as immutable. Every answer carries the
// Content-Security-Policy, `X-Content-Type-Options: nosniff` and `Referrer-Policy: no-referrer`
// of viewer.md §2; responses are gzip-compressed when the client accepts gzip (brotli would
// need a module outside the standard library).
//
// # Content hashes
//
// The hashed names are computed when the handler is built, from the embedded bytes, rather
// than by a generator writing a manifest: a manifest could drift from the files it names,
// hashing at start-up cannot, and it costs a few milliseconds once. Files name each other by
// plain names — `./api.js` in a module import, `'./reducer.wasm'` in a URL, `/assets/app.js`
// in the shell — and the handler rewrites each such quoted reference to the hashed name before
// hashing the referring file, in dependency order, so a change to any module changes the names
// of the modules that import it (their content changed) and no page can load a mix of
// versions. Compressed bodies are made on first request and kept.
//
// The reducer (assets/reducer.wasm, assets/wasm_exec.js) is produced by `go generate ./web`
// (web/internal/buildwasm) from package web/wasm and committed; CI rebuilds it under the Go
// release named by [WasmGoVersion] and compares bytes. The page runs it in a dedicated worker
// (assets/reducer_worker.js): the page's thread only renders, so a fast stream or a long
// run's history does not stall it.
//
// # Rendering a live run
//
// The run page follows the SSE stream and sends what arrived to the worker, one call at a
// time; each call answers with a patch (package web/runview): the timeline entries of the
// events applied, the messages they touched — a message that only grew by deltas as the parts
// the page does not have yet — the tool records they touched, and the run's head. Patches are
// rendered in animation frames within a time budget, in place: new text is appended to the
// text node a message already shows, the head updates only the fields that changed, and the
// timeline makes its rows only as they scroll into view.
package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
)

//go:embed assets
var embedded embed.FS

// CSP is the Content-Security-Policy of every viewer answer (viewer.md §2).
const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; " +
	"img-src 'self' data: https:; media-src https:; connect-src 'self'; object-src 'none'; " +
	"base-uri 'none'; frame-ancestors 'none'; form-action 'self'"

// shellName is the HTML shell among the assets.
const shellName = "index.html"

// asset is one file as served.
type asset struct {
	name   string // hashed name (the shell keeps index.html)
	ctype  string
	body   []byte
	etag   string
	gzOnce sync.Once
	gz     []byte // nil when gzip does not make it smaller
}

// Viewer is the handler of [Handler].
type Viewer struct {
	shell  *asset
	assets map[string]*asset // by hashed name
	names  map[string]string // plain name → hashed name
}

// Handler builds the viewer's handler from the embedded assets. It fails only if the embedded
// files are inconsistent (a reference cycle between modules), which the package's tests rule
// out.
func Handler() (*Viewer, error) { return newViewer(embedded) }

// AssetNames returns the plain asset names and their hashed names (for tests and logs).
func (v *Viewer) AssetNames() map[string]string {
	out := make(map[string]string, len(v.names))
	for k, x := range v.names {
		out[k] = x
	}
	return out
}

func newViewer(fsys embed.FS) (*Viewer, error) {
	files := map[string][]byte{}
	err := fs.WalkDir(fsys, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fsys.ReadFile(p)
		files[strings.TrimPrefix(p, "assets/")] = b
		return err
	})
	if err != nil {
		return nil, err
	}
	if _, ok := files[shellName]; !ok {
		return nil, fmt.Errorf("web: no %s among the assets", shellName)
	}
	v := &Viewer{assets: map[string]*asset{}, names: map[string]string{}}
	plain := make([]string, 0, len(files))
	for n := range files {
		plain = append(plain, n)
	}
	sort.Strings(plain)
	state := map[string]int{} // 0 new, 1 visiting, 2 done
	var visit func(n string) error
	visit = func(n string) error {
		switch state[n] {
		case 1:
			return fmt.Errorf("web: assets reference each other in a cycle through %s", n)
		case 2:
			return nil
		}
		state[n] = 1
		body := files[n]
		if textual(n) {
			for _, dep := range references(body, plain, n) {
				if err := visit(dep); err != nil {
					return err
				}
			}
			body = rewrite(body, plain, v.names, n)
		}
		state[n] = 2
		a := &asset{ctype: contentType(n), body: body}
		sum := sha256.Sum256(body)
		a.etag = `"` + hex.EncodeToString(sum[:12]) + `"`
		if n == shellName {
			a.name = n
			v.shell = a
			return nil
		}
		ext := path.Ext(n)
		a.name = strings.TrimSuffix(n, ext) + "." + hex.EncodeToString(sum[:6]) + ext
		v.names[n] = a.name
		v.assets[a.name] = a
		return nil
	}
	for _, n := range plain {
		if err := visit(n); err != nil {
			return nil, err
		}
	}
	return v, nil
}

func textual(n string) bool {
	switch path.Ext(n) {
	case ".js", ".css", ".html":
		return n != "wasm_exec.js" // Go's file, served byte for byte
	}
	return false
}

// refForms are the quoted spellings a file may use for another asset name n.
func refForms(n string) []string {
	return []string{`"./` + n + `"`, `'./` + n + `'`, `"/assets/` + n + `"`, `'/assets/` + n + `'`}
}

// references lists the assets that body names (other than self), in name order.
func references(body []byte, names []string, self string) []string {
	var out []string
	for _, n := range names {
		if n == self || n == shellName {
			continue
		}
		for _, f := range refForms(n) {
			if bytes.Contains(body, []byte(f)) {
				out = append(out, n)
				break
			}
		}
	}
	return out
}

// rewrite replaces every quoted reference to an asset by its hashed name.
func rewrite(body []byte, names []string, hashed map[string]string, self string) []byte {
	for _, n := range names {
		h, ok := hashed[n]
		if !ok || n == self {
			continue
		}
		for _, f := range refForms(n) {
			body = bytes.ReplaceAll(body, []byte(f), []byte(strings.Replace(f, n, h, 1)))
		}
	}
	return body
}

func contentType(n string) string {
	switch path.Ext(n) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".wasm":
		return "application/wasm"
	case ".svg":
		return "image/svg+xml"
	case ".png":
		return "image/png"
	}
	return "application/octet-stream"
}

// IsViewerPath reports whether p is a page of the viewer (viewer.md §1), answered with the
// shell.
func IsViewerPath(p string) bool {
	switch p {
	case "/", "/open", "/bus", "/notifications":
		return true
	}
	id, ok := strings.CutPrefix(p, "/runs/")
	return ok && id != "" && !strings.Contains(id, "/")
}

// ServeHTTP answers GET and HEAD for the viewer's pages and assets; anything else is 404 (or
// 405 for another method on a viewer path).
func (v *Viewer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	var a *asset
	switch {
	case IsViewerPath(r.URL.Path):
		a = v.shell
		h.Set("Cache-Control", "no-store")
	case strings.HasPrefix(r.URL.Path, "/assets/"):
		a = v.assets[strings.TrimPrefix(r.URL.Path, "/assets/")]
		if a != nil {
			h.Set("Cache-Control", "public, max-age=31536000, immutable")
		}
	}
	if a == nil {
		h.Set("Content-Type", "text/plain; charset=utf-8")
		h.Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte("404 not found\n"))
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		h.Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusMethodNotAllowed)
		_, _ = w.Write([]byte("405 method not allowed\n"))
		return
	}
	h.Set("Content-Type", a.ctype)
	h.Set("Vary", "Accept-Encoding")
	h.Set("ETag", a.etag)
	if a != v.shell && etagMatch(r.Header.Get("If-None-Match"), a.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := a.body
	if acceptsGzip(r.Header.Get("Accept-Encoding")) {
		if gz := a.gzipped(); gz != nil {
			body = gz
			h.Set("Content-Encoding", "gzip")
		}
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// gzipped compresses the body once (best compression: it is done once per process).
func (a *asset) gzipped() []byte {
	a.gzOnce.Do(func() {
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		_, _ = zw.Write(a.body)
		_ = zw.Close()
		if b.Len() < len(a.body) {
			a.gz = b.Bytes()
		}
	})
	return a.gz
}

func etagMatch(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == etag || t == "W/"+etag || t == "*" {
			return true
		}
	}
	return false
}

// acceptsGzip reads Accept-Encoding (RFC 9110 §12.5.3): gzip (or x-gzip, or *) with a q-value
// above 0.
func acceptsGzip(header string) bool {
	ok := false
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		coding = strings.ToLower(strings.TrimSpace(coding))
		if coding != "gzip" && coding != "x-gzip" && coding != "*" {
			continue
		}
		q := 1.0
		for _, p := range strings.Split(params, ";") {
			k, val, _ := strings.Cut(strings.TrimSpace(p), "=")
			if strings.EqualFold(strings.TrimSpace(k), "q") {
				if f, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
					q = f
				}
			}
		}
		if coding == "*" {
			ok = ok || q > 0
			continue
		}
		return q > 0
	}
	return ok
}
