package engine

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"

	"github.com/jsinformer/jsinformer/status"
)

// The support window: the API server minors `make test-compat` and `make test` run the
// tests that touch the API's behaviour against (README, "Supported Kubernetes versions").
// The runner never chooses a behaviour by version — features are detected where they differ
// (dynamicinformer falls back from a refused streaming list, for one) — the window is what
// it tells its user: an API server older than OldestSupportedMinor gets one WARN at start.
const (
	// OldestSupportedMinor is the oldest Kubernetes 1.x minor of the window.
	OldestSupportedMinor = 34
	// NewestTestedMinor is the newest Kubernetes 1.x minor the tests run against.
	NewestTestedMinor = 37
)

// SupportWindow states the window as the docs and the WARN do: "v1.34 to v1.37".
var SupportWindow = fmt.Sprintf("v1.%d to v1.%d", OldestSupportedMinor, NewestTestedMinor)

// readServer reads the API server's /version (its discovery document) once, logs it, and
// warns once when the server is older than the window.
func readServer(ctx context.Context, d discovery.ServerVersionInterfaceWithContext, host string, logger *slog.Logger) (*status.ServerStatus, error) {
	info, err := d.ServerVersionWithContext(ctx)
	if err != nil {
		return nil, err
	}
	st := serverStatus(host, info)
	logger.Info("connected", "server", host, "version", st.Version)
	if st.OlderThanSupported {
		logger.Warn("the API server is older than the supported versions; features may be missing or behave differently",
			"version", st.Version, "supported", SupportWindow)
	}
	return st, nil
}

// serverStatus is what Status shows of the API server at host answering info.
func serverStatus(host string, info *version.Info) *status.ServerStatus {
	st := &status.ServerStatus{Host: host, Version: info.GitVersion, Platform: info.Platform, Supported: SupportWindow}
	if major, minor, ok := minorOf(info); ok {
		st.OlderThanSupported = major < 1 || (major == 1 && minor < OldestSupportedMinor)
	}
	return st
}

// minorOf reads major and minor from gitVersion ("v1.34.4", "v1.33.5-eks-1"), else from the
// major and minor fields, which some providers suffix ("33+"); false when neither parses.
func minorOf(info *version.Info) (major, minor int, ok bool) {
	if v, err := utilversion.ParseGeneric(info.GitVersion); err == nil {
		return int(v.Major()), int(v.Minor()), true
	}
	major, errMajor := strconv.Atoi(strings.TrimRight(info.Major, "+"))
	minor, errMinor := strconv.Atoi(strings.TrimRight(info.Minor, "+"))
	return major, minor, errMajor == nil && errMinor == nil
}
