package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/agentwire/agentwire/relay"
)

// Running the relay for a team: TLS with a certificate pair re-read on SIGHUP, and an auth
// file re-read on SIGHUP and whenever it changes on disk. A reload that fails (a pair that does
// not load, a file that does not parse) keeps what the relay had and logs why.

// certReloader serves the current certificate of a --tls-cert/--tls-key pair: new connections
// get the pair as last loaded, open ones keep theirs.
type certReloader struct {
	certFile, keyFile string
	cur               atomic.Pointer[tls.Certificate]
}

func newCertReloader(certFile, keyFile string) (*certReloader, error) {
	c := &certReloader{certFile: certFile, keyFile: keyFile}
	if err := c.load(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *certReloader) load() error {
	pair, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	if err != nil {
		return err
	}
	c.cur.Store(&pair)
	return nil
}

// config is the relay's TLS configuration (TLS 1.2 or later).
func (c *certReloader) config() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return c.cur.Load(), nil
		},
	}
}

// authPollInterval is how often the auth file is checked for a change on disk.
const authPollInterval = time.Second

// watchReloads re-reads the auth file (when path is set) and the certificate pair (when
// certs is set) on SIGHUP, and the auth file whenever its size or modification time changes,
// until ctx ends.
func watchReloads(ctx context.Context, srv *relay.Server, path string, certs *certReloader, log *slog.Logger) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	stamp := func() string {
		fi, err := os.Stat(path)
		if err != nil {
			return "missing"
		}
		return fmt.Sprint(fi.Size(), fi.ModTime().UnixNano())
	}
	last := ""
	if path != "" {
		last = stamp()
	}
	reloadAuth := func(why string) {
		a, err := relay.LoadAuth(path)
		if err != nil {
			log.Error("auth file not reloaded: keeping the previous one", "file", path, "trigger", why, "error", err)
			return
		}
		if err := srv.SetAuth(a); err != nil {
			log.Error("auth file not reloaded", "file", path, "error", err)
			return
		}
		log.Info("auth file reloaded", "file", path, "trigger", why, "tokens", a.Len())
	}
	tick := time.NewTicker(authPollInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			if path != "" {
				last = stamp()
				reloadAuth("SIGHUP")
			}
			if certs != nil {
				if err := certs.load(); err != nil {
					log.Error("TLS certificate not reloaded: keeping the previous one", "cert", certs.certFile, "key", certs.keyFile, "error", err)
				} else {
					log.Info("TLS certificate reloaded", "cert", certs.certFile)
				}
			}
		case <-tick.C:
			if path == "" {
				continue
			}
			if now := stamp(); now != last {
				last = now
				reloadAuth("file changed")
			}
		}
	}
}
