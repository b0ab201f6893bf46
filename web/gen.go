package web

// The reducer in the browser: package web/wasm built for js/wasm, with the wasm_exec.js of the
// same Go release (viewer.md §4).
//go:generate go run ./internal/buildwasm
