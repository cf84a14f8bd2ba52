//go:build k8s_1_36 || k8s_1_37

package main

// What --time needs from v1.36 on: SchedulePod takes the queued pod,
// recorders log. (newInformerFactory differs by release: timing_1_3x.go.)

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	schedprofile "k8s.io/kubernetes/pkg/scheduler/profile"
)

func recorderFactory(b events.EventBroadcasterAdapter) schedprofile.RecorderFactory {
	return func(name string) events.EventRecorderLogger { return b.NewRecorder(name) }
}

// countAttempts times every scheduling attempt of the scheduler's loop.
func countAttempts(sched *scheduler.Scheduler, rec *timingRecord) {
	inner := sched.SchedulePod
	sched.SchedulePod = func(ctx context.Context, f framework.Framework, state fwk.CycleState, pi *framework.QueuedPodInfo) (scheduler.ScheduleResult, error) {
		start := time.Now()
		r, err := inner(ctx, f, state, pi)
		rec.attempt(start, time.Now())
		return r, err
	}
}

func schedulePod(ctx context.Context, sched *scheduler.Scheduler, f framework.Framework, state fwk.CycleState, pod *v1.Pod) (scheduler.ScheduleResult, error) {
	pi, err := framework.NewPodInfo(pod)
	if err != nil {
		return scheduler.ScheduleResult{}, err
	}
	return sched.SchedulePod(ctx, f, state, &framework.QueuedPodInfo{PodInfo: pi})
}
