// Package proxy connects the cluster to the compiler: it turns the
// configuration and the Node into compiler options, and (as the node agent)
// watches the API server and runs the sync loop.
package proxy
