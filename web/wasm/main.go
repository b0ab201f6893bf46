//go:build js && wasm

// Command wasm is the web viewer's reducer: the Go events package compiled with GOOS=js
// GOARCH=wasm (viewer.md §4). `go generate ./web` builds it into web/assets/reducer.wasm.
//
// It sets globalThis.agentwireReducer to an object of functions; strings cross as JS strings,
// byte input as Uint8Array, and JSON results as strings (shapes in package web/runview):
//
//	validate(bytes Uint8Array) → message string | null      events.ParseEvent's exact message
//	validateFile(bytes) → '[{"line":N,"message":"…"}]'        what `events validate` prints
//	newSession(k number) → id                                 a runview.Session, cached state every k events
//	free(id)
//	load(id, bytes) → message | null                          start from a snapshot (or a GET /v1/runs answer)
//	apply(id, text string) → patch JSON                       reduce NDJSON lines, stop at the first refusal
//	applyFile(id, bytes) → patch JSON                         /open: skip invalid lines, stop at a refusal
//	view(id) → view JSON;  viewAt(id, n) → view JSON | '{"error":"…"}'
//	snapshot(id) → §8.1 JSON;  snapshotAt(id, n) → §8.1 JSON | '{"error":"…"}'
//	info(id) → '{"len":L,"base":B,"last":S}'                  applied events, base and last logicalSequence
//
// Every function runs synchronously on the thread that loaded the module (the viewer loads it
// in a dedicated worker, web/assets/reducer_worker.js, so that reducing never holds the page's
// thread); a call never panics into JS (a recovered panic becomes an Error value returned).
package main

import (
	"syscall/js"

	"github.com/agentwire/agentwire/web/runview"
)

var host = runview.NewHost()

func bytesArg(v js.Value) []byte {
	if v.Type() == js.TypeString {
		return []byte(v.String())
	}
	b := make([]byte, v.Get("length").Int())
	js.CopyBytesToGo(b, v)
	return b
}

// orNull is a message result: the message, or null when there is none.
func orNull(msg string, ok bool) any {
	if !ok {
		return nil
	}
	return msg
}

// fn wraps f so that a panic (a bad argument from JS) becomes a JS Error thrown by the call
// rather than the end of the Go program.
func fn(f func(args []js.Value) any) js.Func {
	return js.FuncOf(func(this js.Value, args []js.Value) (out any) {
		defer func() {
			if r := recover(); r != nil {
				out = js.Global().Get("Error").New("agentwireReducer: bad call")
			}
		}()
		return f(args)
	})
}

func main() {
	api := map[string]any{
		"validate":     fn(func(a []js.Value) any { return orNull(host.Validate(bytesArg(a[0]))) }),
		"validateFile": fn(func(a []js.Value) any { return host.ValidateFile(bytesArg(a[0])) }),
		"newSession": fn(func(a []js.Value) any {
			k := 0
			if len(a) > 0 && a[0].Type() == js.TypeNumber {
				k = a[0].Int()
			}
			return host.NewSession(k)
		}),
		"free":       fn(func(a []js.Value) any { host.Free(a[0].Int()); return nil }),
		"load":       fn(func(a []js.Value) any { return orNull(host.Load(a[0].Int(), bytesArg(a[1]))) }),
		"apply":      fn(func(a []js.Value) any { return host.Apply(a[0].Int(), bytesArg(a[1])) }),
		"applyFile":  fn(func(a []js.Value) any { return host.ApplyFile(a[0].Int(), bytesArg(a[1])) }),
		"view":       fn(func(a []js.Value) any { return host.View(a[0].Int()) }),
		"viewAt":     fn(func(a []js.Value) any { return host.ViewAt(a[0].Int(), a[1].Float()) }),
		"snapshot":   fn(func(a []js.Value) any { return host.Snapshot(a[0].Int()) }),
		"snapshotAt": fn(func(a []js.Value) any { return host.SnapshotAt(a[0].Int(), a[1].Float()) }),
		"info":       fn(func(a []js.Value) any { return host.Info(a[0].Int()) }),
	}
	js.Global().Set("agentwireReducer", js.ValueOf(api))
	// Tell the page the functions are there, then keep the program (and its callbacks) alive.
	if ready := js.Global().Get("agentwireReducerReady"); ready.Type() == js.TypeFunction {
		ready.Invoke()
	}
	select {}
}
