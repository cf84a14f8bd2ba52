// Command oracle runs the real kube-scheduler framework (k8s.io/kubernetes,
// the release this binary was built against) over a kschedx fixture and
// writes what kschedx's result document says, in its field names: the
// reference the project's golden files and differential tests are held to.
//
//	oracle [--mode explain|simulate] [--config FILE] [--feature-gates A=true,B=false] FIXTURE...
//	oracle --dump-gates [--feature-gates A=true,B=false]
//	oracle --serve [--feature-gates A=true,B=false]    (requests on stdin, one per line: serve.go)
//	oracle --time [--mode explain|simulate] ... FIXTURE...   (the real scheduler's cost: timing.go)
//
// explain evaluates every pending pod of the fixture on its own against the
// fixture's cluster; simulate schedules them one after another in queue
// order, each placement and preemption applied before the next pod. Ties
// between equal top scores go to the smallest node name; every node is
// evaluated (percentageOfNodesToScore 100). --dump-gates writes every
// feature gate kube-scheduler registers instead (gates.go). Exit status: 0
// written, 2 usage, 3 bad input.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime/debug"

	"github.com/go-logr/logr"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
)

func main() {
	mode := flag.String("mode", "explain", "explain or simulate")
	configPath := flag.String("config", "", "a KubeSchedulerConfiguration file (default: the release's default configuration)")
	gates := flag.String("feature-gates", "", "feature gates set otherwise than the release's defaults: A=true,B=false")
	tieBreak := flag.String("tie-break", "name", "how one node is chosen among equal top scores: only name")
	debugLog := flag.Bool("debug", false, "kube-scheduler's own log on stderr")
	showVersion := flag.Bool("version", false, "print the k8s.io/kubernetes release and exit")
	dumpGates := flag.Bool("dump-gates", false, "write every feature gate kube-scheduler registers (specs, history, value, dependencies) and exit")
	serveMode := flag.Bool("serve", false, "run the requests read from stdin, one JSON object per line (serve.go)")
	timing := flag.Bool("time", false, "time the real scheduler instead (timing.go): one JSON line of figures")
	// Flags may come after the fixture paths, as kschedx's options do.
	var paths []string
	for args := os.Args[1:]; ; {
		if err := flag.CommandLine.Parse(args); err != nil {
			os.Exit(2)
		}
		args = flag.CommandLine.Args()
		if len(args) == 0 {
			break
		}
		paths, args = append(paths, args[0]), args[1:]
	}

	if *showVersion {
		fmt.Println(kubernetesRelease())
		return
	}
	if *dumpGates {
		if *gates != "" {
			if err := utilfeature.DefaultMutableFeatureGate.Set(*gates); err != nil {
				fmt.Fprintf(os.Stderr, "oracle: --feature-gates: %v\n", err)
				os.Exit(2)
			}
		}
		writeJSON(gatesDocument())
		return
	}
	if (*mode != "explain" && *mode != "simulate") || *tieBreak != "name" || (len(paths) == 0) != *serveMode {
		fmt.Fprintln(os.Stderr, "usage: oracle [--mode explain|simulate] [--config FILE] [--feature-gates A=true,...] FIXTURE...\n"+
			"       oracle --serve [--feature-gates A=true,...]\n"+
			"       oracle --dump-gates [--feature-gates A=true,...]")
		os.Exit(2)
	}
	if !*debugLog {
		klog.SetLogger(logr.Discard())
	}
	if *gates != "" {
		if err := utilfeature.DefaultMutableFeatureGate.Set(*gates); err != nil {
			fmt.Fprintf(os.Stderr, "oracle: --feature-gates: %v\n", err)
			os.Exit(2)
		}
	}
	// The scheduler's metrics exist before any of its parts runs (scheduler.New).
	metrics.Register()
	if *serveMode {
		os.Exit(serveStdio())
	}
	if *timing {
		if err := runTiming(*mode, *configPath, paths); err != nil {
			fmt.Fprintf(os.Stderr, "oracle: %v\n", err)
			os.Exit(3)
		}
		return
	}
	doc, err := run(*mode, *configPath, paths)
	if err != nil {
		fmt.Fprintf(os.Stderr, "oracle: %v\n", err)
		os.Exit(3)
	}
	writeJSON(doc)
}

func writeJSON(doc map[string]any) {
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		fmt.Fprintf(os.Stderr, "oracle: %v\n", err)
		os.Exit(1)
	}
}

// kubernetesRelease is the k8s.io/kubernetes module version built in.
func kubernetesRelease() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "k8s.io/kubernetes" {
				return dep.Version
			}
		}
	}
	return "unknown"
}

func run(mode, configPath string, paths []string) (map[string]any, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg, err := loadConfig(configPath)
	if err != nil {
		return nil, err
	}
	raws, err := readFixture(paths)
	if err != nil {
		return nil, err
	}
	st, err := admitFixture(raws)
	if err != nil {
		return nil, err
	}
	e, err := newEnv(ctx, cfg, configPath != "", st)
	if err != nil {
		return nil, err
	}
	pods := []map[string]any{}
	for _, pod := range queueOrder(st.pending) {
		var r *podResult
		if mode == "simulate" {
			r = e.step(pod)
		} else {
			r = e.schedule(pod)
		}
		pods = append(pods, podDocument(r, mode))
	}
	return map[string]any{
		"apiVersion": "kschedx/v1",
		"kind":       "SchedulingResult",
		"mode":       mode,
		"profile":    e.profiles[0].name,
		"reference":  map[string]any{"kubernetes": kubernetesRelease()},
		"tieBreak":   "name",
		"pods":       pods,
	}, nil
}

// podDocument is a pod's entry in the result document (result-schema.md).
func podDocument(r *podResult, mode string) map[string]any {
	pod := r.pod
	d := map[string]any{
		"pod":           podKey(pod),
		"uid":           string(pod.UID),
		"priority":      podPriority(pod),
		"schedulerName": pod.Spec.SchedulerName,
		"status":        r.status,
		"selectedNode":  nil,
		"topNodes":      r.top,
		"message":       r.message,
		"preFilter":     r.preFilter,
		"nodes":         r.nodes,
		"preemption":    r.preemption,
	}
	if r.selected != "" {
		d["selectedNode"] = r.selected
	}
	if r.preemption == nil {
		d["preemption"] = nil
	}
	if r.gate != nil {
		d["gate"] = r.gate
		d["preFilter"] = []map[string]any{}
	}
	if r.preFilterResult != nil {
		d["preFilterResult"] = r.preFilterResult
	}
	if len(r.notes) > 0 {
		d["notes"] = r.notes
	}
	if mode == "simulate" && r.placed != "" {
		d["placedNode"] = r.placed
	}
	return d
}
