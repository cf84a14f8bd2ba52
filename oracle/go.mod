// The oracle is built per Kubernetes minor against mod/k8s-MINOR.mod (go
// build -modfile): see ./build. This file only marks the module root.
module kschedx.dev/oracle

go 1.25.0
