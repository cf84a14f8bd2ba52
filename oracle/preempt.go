package main

// DefaultPreemption made deterministic, as the golden corpus and kschedx's
// `--tie-break name` are: kube-scheduler examines the potential nodes from
// a random offset, in parallel, and breaks full ties between candidates by
// Go map order. The plugin's own preemption.Interface is wrapped so that
// the search starts at offset 0 (with parallelism 1 the potential nodes are
// examined in node order) and candidates equal on every criterion go to the
// smallest node name; the victims each dry run selects are recorded for the
// result document. The evaluator is made synchronous and does not call the
// API: simulate removes the victims from the scheduler cache itself.

import (
	"context"
	"math"
	"sort"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
)

type dryRun struct {
	pods          []*v1.Pod
	pdbViolations int
}

// preemptionHooks records what one PostFilter's dry runs found, per node.
type preemptionHooks struct {
	mu     sync.Mutex
	byNode map[string]dryRun
}

func (h *preemptionHooks) reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.byNode = map[string]dryRun{}
}

func (h *preemptionHooks) record(node string, pods []*v1.Pod, pdb int, st *fwk.Status) {
	if !st.IsSuccess() {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.byNode[node] = dryRun{pods: pods, pdbViolations: pdb}
}

func (h *preemptionHooks) victimsOn(node string) (dryRun, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	v, ok := h.byNode[node]
	return v, ok
}

// preemptionIface is the plugin's preemption.Interface with the offset and
// the final tie-break fixed. SelectVictimsOnNode, whose signature differs
// per release, is in compat_*.go.
type preemptionIface struct {
	preemption.Interface
	hooks *preemptionHooks
}

func (w *preemptionIface) GetOffsetAndNumCandidates(nodes int32) (int32, int32) {
	_, n := w.Interface.GetOffsetAndNumCandidates(nodes)
	return 0, n
}

// OrderedScoreFuncs are the plugin's criteria (upstream's defaults when the
// plugin has none: pickOneNodeForPreemption's), then the smallest node name.
func (w *preemptionIface) OrderedScoreFuncs(ctx context.Context, nodesToVictims map[string]*extenderv1.Victims) []func(node string) int64 {
	funcs := w.Interface.OrderedScoreFuncs(ctx, nodesToVictims)
	if len(funcs) == 0 {
		funcs = defaultPreemptionCriteria(nodesToVictims)
	}
	names := make([]string, 0, len(nodesToVictims))
	for n := range nodesToVictims {
		names = append(names, n)
	}
	sort.Strings(names)
	rank := make(map[string]int64, len(names))
	for i, n := range names {
		rank[n] = int64(i)
	}
	return append(funcs, func(node string) int64 { return -rank[node] })
}

// defaultPreemptionCriteria are the criteria pickOneNodeForPreemption
// applies when a plugin gives none, in its order (it has no hook to add a
// last one): fewest PDB violations, lowest highest victim priority,
// smallest sum of victim priorities, fewest victims, latest start of the
// earliest victim.
func defaultPreemptionCriteria(m map[string]*extenderv1.Victims) []func(node string) int64 {
	return []func(string) int64{
		func(node string) int64 { return -m[node].NumPDBViolations },
		func(node string) int64 { return -int64(corev1helpers.PodPriority(m[node].Pods[0])) },
		func(node string) int64 {
			var sum int64
			for _, pod := range m[node].Pods {
				sum += int64(corev1helpers.PodPriority(pod)) + int64(math.MaxInt32+1)
			}
			return -sum
		},
		func(node string) int64 { return -int64(len(m[node].Pods)) },
		func(node string) int64 { return earliestStart(m[node].Pods).UnixNano() },
	}
}

// notStarted is when a pod without status.startTime counts as started:
// upstream's GetPodStartTime takes time.Now() at each call, so such pods
// order by the instant they happen to be looked at. Like kschedx, the
// oracle takes them as started at one instant, after every pod that has a
// start time (a date UnixNano can still count).
var notStarted = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)

func startTime(pod *v1.Pod) time.Time {
	if pod.Status.StartTime != nil {
		return pod.Status.StartTime.Time
	}
	return notStarted
}

// earliestStart is util.GetEarliestPodStartTime: the earliest start among
// the victims of the highest priority.
func earliestStart(pods []*v1.Pod) time.Time {
	earliest := startTime(pods[0])
	maxPriority := corev1helpers.PodPriority(pods[0])
	for _, pod := range pods {
		if p := corev1helpers.PodPriority(pod); p == maxPriority {
			if t := startTime(pod); t.Before(earliest) {
				earliest = t
			}
		} else if p > maxPriority {
			maxPriority = p
			earliest = startTime(pod)
		}
	}
	return earliest
}

// moreImportantPod is util.MoreImportantPod (higher priority, then earlier
// start) with the start times above.
func moreImportantPod(pod1, pod2 *v1.Pod) bool {
	p1, p2 := corev1helpers.PodPriority(pod1), corev1helpers.PodPriority(pod2)
	if p1 != p2 {
		return p1 > p2
	}
	return startTime(pod1).Before(startTime(pod2))
}
