package cirun

import (
	"fmt"
	"slices"

	"github.com/radixark/miles-ci/device"
)

// Leaser takes a shard's devices in the host lock, which every process on
// the host honours (rules §14.3): two runs never hold one device at once.
type Leaser interface {
	// TryLease takes devs of host without waiting. ok false: another
	// process holds some of them, which held names, with who holds them
	// ("pid 4242 miles-ci ci ..., since 13:45:01").
	TryLease(host Host, devs device.Set) (release func(), held Held, ok bool, err error)
}

// Held are devices another process holds, and who.
type Held struct {
	Devices device.Set
	By      string
}

// HostReport is one host of a fleet as a run's report names it.
type HostReport struct {
	Name   string `json:"name"`
	GPUs   string `json:"gpus"`
	Engine string `json:"engine,omitempty"`
}

// setModel sets a GPU unit's stage model, where the checkout's kinds are
// read and some host knows its devices' kinds.
func (s *scheduler) setModel(u *Unit) error {
	if u.GPUs == 0 || s.opt.StageModel == nil || !slices.ContainsFunc(s.place.hosts, Host.Kinded) {
		return nil
	}
	st := *u.Stage
	if len(u.RunsOn) > 0 {
		st.RunsOn = u.RunsOn // a pool unit's runners are its own
	}
	m, err := s.opt.StageModel(st)
	u.Model = device.Model(m)
	return err
}

// need is what a unit asks of the hosts.
func (s *scheduler) need(u *Unit) need {
	n := need{gpus: u.GPUs, model: u.Model}
	switch {
	case len(u.RunsOn) > 0:
		n.runsOn = u.RunsOn
	case u.Stage != nil:
		n.runsOn = u.Stage.RunsOn
	}
	return n
}

// placeUnit gives a unit its host and devices, leased in the host lock;
// false while it must wait (the devices are busy here or elsewhere).
func (s *scheduler) placeUnit(ur *unitRun) bool {
	if ur.u.Stage == nil {
		return true // a resolver runs in miles-ci itself
	}
	n := s.need(&ur.u)
	for range len(s.place.hosts) * (maxHostGPUs + 1) {
		pl, ok := s.place.take(n)
		if !ok {
			return false
		}
		host := s.place.hosts[pl.host]
		if s.opt.Leaser != nil && len(pl.devices) > 0 {
			release, held, ok, err := s.opt.Leaser.TryLease(host, pl.devices)
			if err == nil && !ok {
				s.place.give(pl, n.gpus)
				s.place.heldElsewhere(pl.host, held.Devices)
				if w := waitLine(host, held); w != ur.waiting {
					ur.waiting = w
					s.notifyUnit(ur)
				}
				continue
			}
			if err != nil {
				s.place.give(pl, n.gpus)
				ur.state, ur.out = NotRun, Outcome{Result: ResultFailure, Reason: "the host lock: " + err.Error(), CannotRun: true}
				s.notifyUnit(ur)
				return false
			}
			pl.release = release
		}
		ur.place, ur.placed, ur.waiting = pl, true, ""
		ur.u.Placement = Placement{Host: host.Name, Devices: pl.devices, StandIn: host.StandIn, Substituted: pl.substituted}
		return true
	}
	return false
}

// waitLine is a waiting shard's live line: the devices, and who holds them.
func waitLine(h Host, held Held) string {
	on := ""
	if h.Name != "" {
		on = " of " + h.Name
	}
	return fmt.Sprintf("waiting for GPUs %s%s, held by %s", held.Devices, on, held.By)
}

// release gives a unit's devices back, to this run and to the host lock.
func (s *scheduler) release(ur *unitRun) {
	if !ur.placed {
		return
	}
	if ur.place.release != nil {
		ur.place.release()
	}
	s.place.give(ur.place, ur.u.GPUs)
	ur.placed = false
}

// hostDown marks a unit's host down (its engine could not be reached, or
// failed) and queues the unit again to be placed on another host of its
// kind; it reports false when no host is left for it (the unit then ends
// as it came back, not-run).
func (s *scheduler) hostDown(ur *unitRun) bool {
	h := -1
	for i, host := range s.place.hosts {
		if host.Name == ur.u.Placement.Host {
			h = i
		}
	}
	if h < 0 || !s.place.fleet {
		return false
	}
	s.place.down[h] = ur.out.Reason
	// The shards that wait lose this host: those no other host could hold
	// end now, saying why.
	for _, nr := range s.nodes {
		for _, o := range nr.units {
			if o != ur && o.state == Queued && !s.place.fits(s.need(&o.u)) {
				o.state, o.out = NotRun, Outcome{Result: ResultFailure, CannotRun: true, Reason: s.place.why(s.need(&o.u))}
				s.notifyUnit(o)
			}
		}
	}
	// It never ran there: it keeps no host or devices either way.
	ur.u.Placement = Placement{}
	if !s.place.fits(s.need(&ur.u)) {
		ur.out = Outcome{Result: ResultFailure, CannotRun: true, Reason: s.place.why(s.need(&ur.u))}
		return false
	}
	ur.state, ur.out, ur.started = Queued, Outcome{}, false
	s.notifyUnit(ur)
	s.finishNodes()
	return true
}
