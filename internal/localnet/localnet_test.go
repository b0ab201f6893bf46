package localnet

import "testing"

func TestHostIsLoopback(t *testing.T) {
	for _, tc := range []struct {
		host string
		want bool
	}{
		{"localhost", true},
		{"LOCALHOST:7420", true},
		{"127.0.0.1", true},
		{"127.0.0.1:7420", true},
		{"127.255.3.4:1", true},
		{"[::1]", true},
		{"[::1]:7420", true},
		{"", false},
		{"evil.example", false},
		{"evil.example:7420", false},
		{"localhost.evil.example", false},
		{"foo.localhost", false},
		{"128.0.0.1", false},
		{"0.0.0.0:7420", false},
		{"[::]:7420", false},
		{"::1", false},
		{"[::ffff:127.0.0.1]:80", false},
		{"localhost:", false},
		{"localhost:99999", false},
		{"localhost:7a", false},
		{"[fe80::1%25lo]:80", false},
		{"127.0.0.1.nip.io", false},
	} {
		if got := HostIsLoopback(tc.host); got != tc.want {
			t.Errorf("HostIsLoopback(%q) = %v, want %v", tc.host, got, tc.want)
		}
	}
}

func TestOriginIsLoopback(t *testing.T) {
	for _, tc := range []struct {
		origin string
		want   bool
	}{
		{"http://localhost", true},
		{"http://localhost:5173", true},
		{"https://127.0.0.1:7420", true},
		{"HTTP://127.0.0.1", true},
		{"http://[::1]:8080", true},
		{"http://localhost/", true},
		{"null", false},
		{"", false},
		{"https://evil.example", false},
		{"http://localhost.evil.example", false},
		{"file://", false},
		{"chrome-extension://abcdef", false},
		{"ws://localhost", false},
		{"http://localhost/path", false},
		{"http://user@localhost", false},
		{"http://localhost?x", false},
		{"http://evil.example#@localhost", false},
		{"http://localhost:99999", false},
	} {
		if got := OriginIsLoopback(tc.origin); got != tc.want {
			t.Errorf("OriginIsLoopback(%q) = %v, want %v", tc.origin, got, tc.want)
		}
	}
}

func TestSameOrigin(t *testing.T) {
	for _, tc := range []struct {
		origin, host string
		want         bool
	}{
		{"https://relay.example", "relay.example", true},
		{"https://relay.example", "relay.example:443", true},
		{"http://relay.example:8080", "relay.example:8080", true},
		{"https://RELAY.example", "relay.example", true},
		{"https://relay.example", "relay.example:8080", false},
		{"https://evil.example", "relay.example", false},
		{"null", "relay.example", false},
		{"https://relay.example", "", false},
	} {
		if got := SameOrigin(tc.origin, tc.host); got != tc.want {
			t.Errorf("SameOrigin(%q, %q) = %v, want %v", tc.origin, tc.host, got, tc.want)
		}
	}
}

func TestNormalizeOrigin(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"https://Viewer.Example", "https://viewer.example", true},
		{"https://viewer.example:443/", "https://viewer.example", true},
		{"http://viewer.example:80", "http://viewer.example", true},
		{"http://viewer.example:8080", "http://viewer.example:8080", true},
		{"http://[::1]:80", "http://[::1]", true},
		{"viewer.example", "", false},
		{"https://viewer.example/app", "", false},
		{"null", "", false},
	} {
		got, ok := NormalizeOrigin(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("NormalizeOrigin(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func FuzzOrigin(f *testing.F) {
	for _, s := range []string{"http://localhost:1", "null", "https://[::1]", "http://a@b", "http://127.0.0.1:80/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		loop := OriginIsLoopback(s)
		norm, ok := NormalizeOrigin(s)
		if loop && !ok {
			t.Fatalf("%q is a loopback origin but does not normalize", s)
		}
		if ok {
			again, ok2 := NormalizeOrigin(norm)
			if !ok2 || again != norm {
				t.Fatalf("NormalizeOrigin not idempotent: %q -> %q -> %q (%v)", s, norm, again, ok2)
			}
			if OriginIsLoopback(norm) != loop {
				t.Fatalf("normalizing %q changed the loopback verdict", s)
			}
		}
	})
}
