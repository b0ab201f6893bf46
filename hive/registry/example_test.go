package registry_test

import (
	"fmt"

	"github.com/agentwire/agentwire/hive/registry"
)

func ExampleLookup() {
	t, _ := registry.Lookup("message-receipt")
	_, err := t.Check([]byte(`{"gid":"g-1","by":"codex-85","state":"seen"}`))
	fmt.Println(t.GoName, err)
	// Output: hive.MessageReceiptV1 unknown receipt state
}
