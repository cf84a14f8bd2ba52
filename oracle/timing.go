package main

// --time: what the real kube-scheduler costs on a fixture, for the
// benchmarks to set beside kschedx's figures in the same run. Nothing of
// the oracle's own cycle (cycle.go) is used: no per-plugin recording, no
// tie-breaking patch, no single worker. The scheduler is the release's own,
// built by scheduler.New as cmd/kube-scheduler builds it, over a fake API
// client that holds the fixture's objects; logging is off, the event
// broadcaster records to the fake client as it would to an API server,
// parallelism is the configuration's (16 by default), GOMAXPROCS the
// machine's, and every node is scored (percentageOfNodesToScore 100, as
// kschedx evaluates every node) unless --config says otherwise.
//
//	--mode simulate --time: the scheduler's own loop (sched.Run): pods
//	  popped from its queue in its order, bound through the fake client
//	  (whose pods/binding sets spec.nodeName, so the informers see the pod
//	  bound), preemption's victims deleted through it. It stops once every
//	  pending pod is bound, or once no pod is left to try.
//	--mode explain --time: each pending pod in queue order through the
//	  scheduler's SchedulePod (and PostFilter when it fits nowhere) against
//	  the one unchanged snapshot, the API writes dropped: what kschedx
//	  explain computes.
//
// One JSON line on stdout: wall and CPU seconds, peak RSS, scheduling
// attempts, placements, nominations and victims.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// processStart is as early as the program can note the time (package
// variables are initialised before main runs).
var processStart = time.Now()

// timingRecord is what the fake API server saw the scheduler write.
type timingRecord struct {
	mu          sync.Mutex
	placements  map[string]string
	nominations map[string]string
	victims     []map[string]string
	attempts    int
	errors      []string
	firstPop    time.Time
	lastBound   time.Time
	lastAttempt time.Time
	cycles      time.Duration
}

func (r *timingRecord) attempt(start, end time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.attempts == 0 {
		r.firstPop = start
	}
	r.attempts++
	r.lastAttempt = end
	r.cycles += end.Sub(start)
}

// error keeps the first few errors of cycles, for the line.
func (r *timingRecord) error(pod string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.errors) < 5 {
		r.errors = append(r.errors, pod+": "+err.Error())
	}
}

var podsResource = v1.SchemeGroupVersion.WithResource("pods")

// timingClient is a fake clientset over the fixture's objects that keeps
// what the scheduler writes: a binding sets the pod's spec.nodeName, a
// deletion deletes, a nomination is patched into the pod's status. With
// dropWrites every write is accepted and forgotten, so that the cluster
// every pod is evaluated against stays the fixture.
func timingClient(st *clusterState, rec *timingRecord, dropWrites bool) (*fake.Clientset, error) {
	client := fake.NewClientset()
	for _, obj := range st.objects {
		if err := client.Tracker().Add(obj); err != nil {
			return nil, fmt.Errorf("adding %T: %v", obj, err)
		}
	}
	tracker := client.Tracker()
	if dropWrites {
		for _, verb := range []string{"create", "update", "patch", "delete"} {
			client.PrependReactor(verb, "*", func(a clienttesting.Action) (bool, runtime.Object, error) {
				switch act := a.(type) {
				case clienttesting.CreateAction:
					if b, ok := act.GetObject().(*v1.Binding); ok && a.GetSubresource() == "binding" {
						rec.mu.Lock()
						rec.placements[a.GetNamespace()+"/"+b.Name] = b.Target.Name
						rec.lastBound = time.Now()
						rec.mu.Unlock()
					}
					return true, act.GetObject(), nil
				case clienttesting.UpdateAction:
					return true, act.GetObject(), nil
				case clienttesting.PatchAction:
					// Answered with the object as it is: the patch is dropped.
					obj, err := tracker.Get(a.GetResource(), a.GetNamespace(), act.GetName())
					return true, obj, err
				}
				return true, nil, nil
			})
		}
		return client, nil
	}
	client.PrependReactor("create", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "binding" {
			return false, nil, nil
		}
		b, ok := a.(clienttesting.CreateAction).GetObject().(*v1.Binding)
		if !ok {
			return true, nil, errors.New("pods/binding: not a Binding")
		}
		obj, err := tracker.Get(podsResource, a.GetNamespace(), b.Name)
		if err != nil {
			return true, nil, err
		}
		pod := obj.(*v1.Pod).DeepCopy()
		pod.Spec.NodeName = b.Target.Name
		if err := tracker.Update(podsResource, pod, a.GetNamespace()); err != nil {
			return true, nil, err
		}
		rec.mu.Lock()
		rec.placements[a.GetNamespace()+"/"+b.Name] = b.Target.Name
		rec.lastBound = time.Now()
		rec.mu.Unlock()
		return true, b, nil
	})
	client.PrependReactor("delete", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		name := a.(clienttesting.DeleteAction).GetName()
		if obj, err := tracker.Get(podsResource, a.GetNamespace(), name); err == nil {
			rec.mu.Lock()
			rec.victims = append(rec.victims, map[string]string{
				"pod": a.GetNamespace() + "/" + name, "node": obj.(*v1.Pod).Spec.NodeName})
			rec.mu.Unlock()
		}
		return false, nil, nil // the tracker deletes it
	})
	client.PrependReactor("patch", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		p, ok := a.(clienttesting.PatchAction)
		if !ok || a.GetSubresource() != "status" {
			return false, nil, nil
		}
		var patch struct {
			Status struct {
				NominatedNodeName *string `json:"nominatedNodeName"`
			} `json:"status"`
		}
		if json.Unmarshal(p.GetPatch(), &patch) == nil && patch.Status.NominatedNodeName != nil {
			rec.mu.Lock()
			rec.nominations[a.GetNamespace()+"/"+p.GetName()] = *patch.Status.NominatedNodeName
			rec.mu.Unlock()
		}
		return false, nil, nil
	})
	return client, nil
}

// runTiming runs the real scheduler in the given mode and writes its line.
func runTiming(mode, configPath string, paths []string) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg, err := loadConfig(configPath)
	if err != nil {
		return err
	}
	if configPath == "" || cfg.PercentageOfNodesToScore == nil {
		all := int32(100)
		cfg.PercentageOfNodesToScore = &all
	}
	raws, err := readFixture(paths)
	if err != nil {
		return err
	}
	st, err := admitFixture(raws)
	if err != nil {
		return err
	}
	admitted := time.Now()
	rec := &timingRecord{placements: map[string]string{}, nominations: map[string]string{}}
	client, err := timingClient(st, rec, mode == "explain")
	if err != nil {
		return err
	}
	broadcaster := events.NewEventBroadcasterAdapterWithContext(ctx, client)
	informerFactory := newInformerFactory(client)
	sched, err := scheduler.New(ctx, client, informerFactory, nil, recorderFactory(broadcaster),
		scheduler.WithProfiles(cfg.Profiles...),
		scheduler.WithPercentageOfNodesToScore(cfg.PercentageOfNodesToScore),
		scheduler.WithPodMaxBackoffSeconds(cfg.PodMaxBackoffSeconds),
		scheduler.WithPodInitialBackoffSeconds(cfg.PodInitialBackoffSeconds),
		scheduler.WithExtenders(cfg.Extenders...),
		scheduler.WithParallelism(cfg.Parallelism),
	)
	if err != nil {
		return err
	}
	if mode != "explain" {
		countAttempts(sched, rec)
	}
	broadcaster.StartRecordingToSink(ctx.Done())
	defer broadcaster.Shutdown()
	informerFactory.Start(ctx.Done())
	informerFactory.WaitForCacheSync(ctx.Done())
	if err := sched.WaitForHandlersSync(ctx); err != nil {
		return fmt.Errorf("waiting for the scheduler's event handlers: %v", err)
	}
	loaded := time.Now()

	if mode == "explain" {
		if err := explainEach(ctx, sched, st, rec); err != nil {
			return err
		}
	} else {
		go sched.Run(ctx)
		waitUntilDone(sched, rec, len(st.pending))
	}
	end := time.Now()
	cancel()

	var usage syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &usage)
	cpu := time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
	rec.mu.Lock()
	defer rec.mu.Unlock()
	scheduling := 0.0
	if rec.attempts > 0 {
		last := rec.lastAttempt
		if rec.lastBound.After(last) {
			last = rec.lastBound
		}
		scheduling = last.Sub(rec.firstPop).Seconds()
	}
	line := map[string]any{
		"mode":                     mode,
		"kubernetes":               kubernetesRelease(),
		"wallSeconds":              end.Sub(processStart).Seconds(),
		"loadSeconds":              loaded.Sub(processStart).Seconds(),
		"readSeconds":              admitted.Sub(processStart).Seconds(),
		"schedulingSeconds":        scheduling,
		"cycleSeconds":             rec.cycles.Seconds(),
		"cpuSeconds":               cpu.Seconds(),
		"peakRSSMiB":               usage.Maxrss / 1024,
		"pending":                  len(st.pending),
		"attempts":                 rec.attempts,
		"placements":               rec.placements,
		"nominations":              rec.nominations,
		"victims":                  victimsOrEmpty(rec.victims),
		"errors":                   append([]string{}, rec.errors...),
		"percentageOfNodesToScore": *cfg.PercentageOfNodesToScore,
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	return enc.Encode(line)
}

func victimsOrEmpty(v []map[string]string) []map[string]string {
	if v == nil {
		return []map[string]string{}
	}
	return v
}

// explainEach evaluates every pending pod, in queue order, against the
// unchanged cluster: the scheduler's SchedulePod, and its PostFilter
// (preemption) for a pod that fits nowhere, as schedulingCycle runs them.
func explainEach(ctx context.Context, sched *scheduler.Scheduler, st *clusterState, rec *timingRecord) error {
	// The snapshot every pod is evaluated against, taken once (from v1.36
	// on, schedulingCycle takes it, not SchedulePod).
	for _, fw := range sched.Profiles {
		if snap, ok := fw.SnapshotSharedLister().(*internalcache.Snapshot); ok {
			if err := sched.Cache.UpdateSnapshot(klog.FromContext(ctx), snap); err != nil {
				return err
			}
			break
		}
	}
	for _, pod := range queueOrder(st.pending) {
		fw, ok := sched.Profiles[pod.Spec.SchedulerName]
		if !ok {
			for _, p := range sched.Profiles {
				fw = p
				break
			}
			if len(sched.Profiles) > 1 {
				fw = sched.Profiles["default-scheduler"]
			}
		}
		start := time.Now()
		state := framework.NewCycleState()
		result, err := schedulePod(ctx, sched, fw, state, pod)
		var fitErr *framework.FitError
		switch {
		case err == nil:
			rec.mu.Lock()
			rec.placements[podKey(pod)] = result.SuggestedHost
			rec.mu.Unlock()
		case errors.As(err, &fitErr):
			if !fw.HasPostFilterPlugins() {
				break
			}
			pf, st := fw.RunPostFilterPlugins(ctx, state, pod, fitErr.Diagnosis.NodeToStatus)
			if pf != nil && pf.NominatingInfo != nil && pf.NominatedNodeName != "" {
				rec.mu.Lock()
				rec.nominations[podKey(pod)] = pf.NominatedNodeName
				rec.mu.Unlock()
			} else if !st.IsSuccess() && !st.IsRejected() {
				rec.error(podKey(pod), st.AsError())
			}
		default:
			rec.error(podKey(pod), err)
		}
		rec.attempt(start, time.Now())
	}
	return nil
}

// waitUntilDone returns once every pending pod is bound, or once the queue
// has had nothing to pop for five seconds with no attempt, binding or
// eviction since (the rest wait for an event that will not come; a
// preemption's evictions, asynchronous, count as progress, and on a loaded
// machine they can lag the attempt that asked for them by seconds). The
// line's schedulingSeconds ends at the last attempt or binding, not after
// this wait.
func waitUntilDone(sched *scheduler.Scheduler, rec *timingRecord, pending int) {
	const quiet = 5 * time.Second
	lastChange := time.Now()
	lastSeen := -1
	for {
		time.Sleep(2 * time.Millisecond)
		rec.mu.Lock()
		bound, progress := len(rec.placements), rec.attempts+len(rec.placements)+len(rec.victims)
		rec.mu.Unlock()
		if bound >= pending {
			return
		}
		if progress != lastSeen {
			lastSeen, lastChange = progress, time.Now()
			continue
		}
		if time.Since(lastChange) < quiet {
			continue
		}
		_, summary := sched.SchedulingQueue.PendingPods()
		var active, backoff, unschedulable int
		if _, err := fmt.Sscanf(summary, "activeQ:%d; backoffQ:%d;", &active, &backoff); err == nil &&
			active == 0 && backoff == 0 {
			_ = unschedulable
			return
		}
	}
}
