package main

// The feature gates kube-scheduler registers, as its --feature-gates flag
// knows them: what kschedx's gate history is checked against.

import (
	"sort"
	"strings"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	logsapi "k8s.io/component-base/logs/api/v1"
	metricsfeatures "k8s.io/component-base/metrics/features"
)

// kube-scheduler's gates come from the init functions of the packages it
// imports: k8s.io/kubernetes/pkg/features (the Kubernetes gates, client-go's
// through an adapter, the zpages gates), which the oracle imports too, and
// cmd/kube-scheduler/app's own init (server.go), which adds the logging and
// metrics gates with exactly these two calls. The oracle does not import
// that package (it would pull the API server's storage and etcd clients into
// every build), so it makes the same calls.
func init() {
	utilruntime.Must(logsapi.AddFeatureGates(utilfeature.DefaultMutableFeatureGate))
	utilruntime.Must(metricsfeatures.AddFeatureGates(utilfeature.DefaultMutableFeatureGate))
}

// stageName is a prerelease as kschedx writes it.
func stageName(p featuregate.FeatureSpec) string {
	switch p.PreRelease {
	case featuregate.GA:
		return "GA"
	case featuregate.Alpha:
		return "Alpha"
	case featuregate.Beta:
		return "Beta"
	case featuregate.Deprecated:
		return "Deprecated"
	case featuregate.PreAlpha:
		return "PreAlpha"
	}
	return string(p.PreRelease)
}

func specDocument(s featuregate.FeatureSpec) map[string]any {
	d := map[string]any{
		"default": s.Default,
		"stage":   stageName(s),
		"locked":  s.LockToDefault,
	}
	if s.Version != nil {
		d["version"] = s.Version.String()
	}
	if s.MinCompatibilityVersion != nil {
		d["minCompatibilityVersion"] = s.MinCompatibilityVersion.String()
	}
	return d
}

// gatesDocument is every gate kube-scheduler's --feature-gates knows, with
// its spec at the binary's emulation version (GetAll: the spec kube-scheduler
// uses; PreAlpha gates are unknown to the flag) and every versioned spec of
// its history (GetAllVersioned), its value (Enabled) and the gates it needs
// (Dependencies).
func gatesDocument() map[string]any {
	fg := utilfeature.DefaultMutableFeatureGate
	deps := map[featuregate.Feature][]featuregate.Feature{}
	if d, ok := fg.(interface {
		Dependencies() map[featuregate.Feature][]featuregate.Feature
	}); ok {
		deps = d.Dependencies()
	}
	versioned := fg.GetAllVersioned()
	gates := map[string]any{}
	for name, spec := range fg.GetAll() {
		history := []map[string]any{}
		for _, s := range versioned[name] {
			history = append(history, specDocument(s))
		}
		needs := []string{}
		for _, d := range deps[name] {
			needs = append(needs, string(d))
		}
		sort.Strings(needs)
		g := specDocument(spec)
		delete(g, "version")
		delete(g, "minCompatibilityVersion")
		if spec.Version != nil {
			g["since"] = spec.Version.String()
		}
		g["enabled"] = fg.Enabled(name)
		g["history"] = history
		g["dependencies"] = needs
		gates[string(name)] = g
	}
	return map[string]any{
		"kubernetes":              kubernetesRelease(),
		"emulationVersion":        fg.EmulationVersion().String(),
		"minCompatibilityVersion": minorOf(fg.MinCompatibilityVersion().String()),
		"gates":                   gates,
	}
}

func minorOf(v string) string {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return v
	}
	return parts[0] + "." + parts[1]
}
