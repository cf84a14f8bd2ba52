package main

// The fixture's objects as API types: the kinds the scheduler reads (the
// table of docs/fixtures.md), each decoded from its JSON by kind. Other
// kinds are left out, as kschedx leaves them out.

import (
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// kinds maps each kind the oracle reads to a new empty object of its type.
// DeviceTaintRule's API version differs per release (compat_*.go).
var kinds = map[string]func() runtime.Object{
	"Pod":                   func() runtime.Object { return &v1.Pod{} },
	"Node":                  func() runtime.Object { return &v1.Node{} },
	"Namespace":             func() runtime.Object { return &v1.Namespace{} },
	"PersistentVolume":      func() runtime.Object { return &v1.PersistentVolume{} },
	"PersistentVolumeClaim": func() runtime.Object { return &v1.PersistentVolumeClaim{} },
	"Service":               func() runtime.Object { return &v1.Service{} },
	"ReplicationController": func() runtime.Object { return &v1.ReplicationController{} },
	"ReplicaSet":            func() runtime.Object { return &appsv1.ReplicaSet{} },
	"StatefulSet":           func() runtime.Object { return &appsv1.StatefulSet{} },
	"StorageClass":          func() runtime.Object { return &storagev1.StorageClass{} },
	"CSINode":               func() runtime.Object { return &storagev1.CSINode{} },
	"CSIDriver":             func() runtime.Object { return &storagev1.CSIDriver{} },
	"CSIStorageCapacity":    func() runtime.Object { return &storagev1.CSIStorageCapacity{} },
	"VolumeAttachment":      func() runtime.Object { return &storagev1.VolumeAttachment{} },
	"RuntimeClass":          func() runtime.Object { return &nodev1.RuntimeClass{} },
	"PodDisruptionBudget":   func() runtime.Object { return &policyv1.PodDisruptionBudget{} },
	"PriorityClass":         func() runtime.Object { return &schedulingv1.PriorityClass{} },
	"ResourceSlice":         func() runtime.Object { return &resourcev1.ResourceSlice{} },
	"DeviceClass":           func() runtime.Object { return &resourcev1.DeviceClass{} },
	"ResourceClaim":         func() runtime.Object { return &resourcev1.ResourceClaim{} },
	"ResourceClaimTemplate": func() runtime.Object { return &resourcev1.ResourceClaimTemplate{} },
	"DeviceTaintRule":       newDeviceTaintRule,
}

// namespacedKinds live in a namespace ("default" when the object names none).
var namespacedKinds = map[string]bool{
	"Pod": true, "PersistentVolumeClaim": true, "CSIStorageCapacity": true, "PodDisruptionBudget": true,
	"Service": true, "ReplicaSet": true, "StatefulSet": true, "ReplicationController": true,
	"Deployment": true, "DaemonSet": true, "Job": true, "CronJob": true,
	"ResourceClaim": true, "ResourceClaimTemplate": true,
}

// decode turns one object's JSON into its API type; nil for a kind the
// scheduler does not read.
func decode(o rawObject) (runtime.Object, error) {
	newObj, ok := kinds[o.kind]
	if !ok {
		return nil, nil
	}
	obj := newObj()
	data, err := json.Marshal(o.data)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %v", o.origin, o.kind, err)
	}
	if err := json.Unmarshal(data, obj); err != nil {
		return nil, fmt.Errorf("%s: %s: %v", o.origin, o.kind, err)
	}
	return obj, nil
}
