package web_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/agentwire/agentwire/web"
)

func viewer(t testing.TB) *web.Viewer {
	t.Helper()
	v, err := web.Handler()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func get(t testing.TB, h http.Handler, method, path string, hdr map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, path, nil)
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

const wantCSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data: https:; media-src https:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"

func TestShellForEveryViewerURL(t *testing.T) {
	v := viewer(t)
	shell := get(t, v, "GET", "/", nil).Body.String()
	if !strings.Contains(shell, "<!doctype html>") {
		t.Fatal("no shell")
	}
	for _, tc := range []struct {
		method, path string
		code         int
	}{
		{"GET", "/", 200}, {"GET", "/runs/run-1", 200}, {"GET", "/runs/a%20b", 200}, {"GET", "/open", 200},
		{"GET", "/bus?network=org&channel=c", 200}, {"GET", "/notifications?subject=a&subject=b", 200},
		{"HEAD", "/", 200}, {"GET", "/runs/", 404}, {"GET", "/runs/a/b", 404}, {"GET", "/nope", 404},
		{"GET", "/assets/app.js", 404}, {"GET", "/assets/", 404}, {"POST", "/", 405}, {"DELETE", "/runs/x", 405},
	} {
		w := get(t, v, tc.method, tc.path, nil)
		if w.Code != tc.code {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, w.Code, tc.code)
		}
		h := w.Header()
		if h.Get("Content-Security-Policy") != wantCSP || h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("%s %s: security headers %v", tc.method, tc.path, h)
		}
		if tc.code == 200 {
			if h.Get("Cache-Control") != "no-store" || h.Get("Content-Type") != "text/html; charset=utf-8" {
				t.Errorf("%s %s: shell headers %v", tc.method, tc.path, h)
			}
			if tc.method == "GET" && w.Body.String() != shell {
				t.Errorf("%s: not the shell", tc.path)
			}
			if tc.method == "HEAD" && w.Body.Len() != 0 {
				t.Errorf("HEAD with a body")
			}
		}
	}
}

var hashedRef = regexp.MustCompile(`["'](?:\./|/assets/)([A-Za-z0-9_]+\.[0-9a-f]{12}\.(?:js|css|wasm))["']`)

// TestAssets: every reference in the shell and the modules names a served, hashed asset;
// assets are immutable for a year, typed, gzip-compressed on request, and answer 304 to their
// ETag.
func TestAssets(t *testing.T) {
	v := viewer(t)
	names := v.AssetNames()
	for _, plain := range []string{"app.js", "api.js", "dom.js", "render.js", "run.js", "reducer.js", "reducer_worker.js", "style.css", "reducer.wasm", "wasm_exec.js"} {
		if names[plain] == "" {
			t.Fatalf("no asset %s: %v", plain, names)
		}
	}
	seen := map[string]bool{}
	var walk func(path string)
	walk = func(path string) {
		if seen[path] {
			return
		}
		seen[path] = true
		w := get(t, v, "GET", path, nil)
		if w.Code != 200 {
			t.Fatalf("%s: %d", path, w.Code)
		}
		for _, m := range hashedRef.FindAllStringSubmatch(w.Body.String(), -1) {
			walk("/assets/" + m[1])
		}
	}
	walk("/")
	for plain, hashed := range names {
		if plain != "wasm_exec.js" && plain != "reducer.wasm" && !seen["/assets/"+hashed] && strings.HasSuffix(plain, ".js") {
			t.Errorf("module %s (%s) is referenced by nothing", plain, hashed)
		}
	}
	if !seen["/assets/"+names["reducer.wasm"]] || !seen["/assets/"+names["wasm_exec.js"]] || !seen["/assets/"+names["style.css"]] {
		t.Fatalf("wasm, wasm_exec.js or style.css not reached from the shell: %v", seen)
	}
	for plain, want := range map[string]string{"app.js": "text/javascript; charset=utf-8", "style.css": "text/css; charset=utf-8", "reducer.wasm": "application/wasm"} {
		path := "/assets/" + names[plain]
		plainBody := get(t, v, "GET", path, nil)
		w := get(t, v, "GET", path, map[string]string{"Accept-Encoding": "br;q=1, gzip;q=0.8"})
		h := w.Header()
		if h.Get("Content-Type") != want || h.Get("Cache-Control") != "public, max-age=31536000, immutable" || h.Get("Content-Encoding") != "gzip" || h.Get("Vary") != "Accept-Encoding" {
			t.Errorf("%s: headers %v", plain, h)
		}
		zr, err := gzip.NewReader(w.Body)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(zr)
		if !bytes.Equal(body, plainBody.Body.Bytes()) || plainBody.Header().Get("Content-Encoding") != "" {
			t.Errorf("%s: gzip body differs from the identity body", plain)
		}
		if w := get(t, v, "GET", path, map[string]string{"If-None-Match": h.Get("ETag")}); w.Code != http.StatusNotModified {
			t.Errorf("%s: If-None-Match answered %d", plain, w.Code)
		}
	}
	for _, ae := range []string{"gzip;q=0", "identity", "br", ""} {
		if w := get(t, v, "GET", "/assets/"+names["app.js"], map[string]string{"Accept-Encoding": ae}); w.Header().Get("Content-Encoding") != "" {
			t.Errorf("Accept-Encoding %q: compressed", ae)
		}
	}
	for _, ae := range []string{"gzip", "GZIP", "deflate, gzip", "*", "x-gzip;q=0.5"} {
		if w := get(t, v, "GET", "/", map[string]string{"Accept-Encoding": ae}); w.Header().Get("Content-Encoding") != "gzip" {
			t.Errorf("Accept-Encoding %q: not compressed", ae)
		}
	}
}

// TestNoInlineScript: the shell has no inline script or style and no handler attributes, so
// the CSP needs no 'unsafe-inline'; no module writes HTML.
func TestNoInlineScript(t *testing.T) {
	v := viewer(t)
	shell := get(t, v, "GET", "/", nil).Body.String()
	if regexp.MustCompile(`<script(?:\s[^>]*)?>\s*[^<\s]`).MatchString(shell) || strings.Contains(shell, "<style") || regexp.MustCompile(`\son[a-z]+=`).MatchString(shell) {
		t.Fatal("inline script, style or handler in the shell")
	}
	for plain, hashed := range v.AssetNames() {
		if !strings.HasSuffix(plain, ".js") || plain == "wasm_exec.js" {
			continue
		}
		body := get(t, v, "GET", "/assets/"+hashed, nil).Body.String()
		for _, bad := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"} {
			if strings.Contains(body, bad) {
				t.Errorf("%s uses %s", plain, bad)
			}
		}
	}
}

func FuzzServe(f *testing.F) {
	v := viewer(f)
	for _, s := range []string{"/", "/runs/x", "/assets/app.js", "/open?x=1", "/%2e%2e/", "/runs/%00"} {
		f.Add("GET", s, "gzip")
	}
	f.Fuzz(func(t *testing.T, method, path, ae string) {
		if method == "" || strings.ContainsAny(method, " \t\r\n()<>@,;:\\\"/[]?={}") {
			return
		}
		r, err := http.NewRequest(method, "http://127.0.0.1"+path, nil)
		if err != nil || r.URL.Path == "" {
			return
		}
		r.Header.Set("Accept-Encoding", ae)
		w := httptest.NewRecorder()
		v.ServeHTTP(w, r)
		switch w.Code {
		case 200, 304, 404, 405:
		default:
			t.Fatalf("%s %q: %d", method, path, w.Code)
		}
		if w.Header().Get("Content-Security-Policy") != wantCSP {
			t.Fatal("no CSP")
		}
		if w.Code == 200 && web.IsViewerPath(r.URL.Path) != (w.Header().Get("Cache-Control") == "no-store") {
			t.Fatalf("%q: cache %q", path, w.Header().Get("Cache-Control"))
		}
	})
}
