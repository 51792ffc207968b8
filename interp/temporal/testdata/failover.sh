#!/bin/bash
# Failover latency on the real server: SIGKILL a worker mid-step; how long
# until the step's processes are gone, until the client says the step
# waits for its worker, and until a restarted worker finishes the run.
set -u
APL=${APL:-apl}
SRV=${SRV:?the Temporal dev server binary: go build -o /tmp/devserver ./interp/temporal/internal/devserver}
cd "$(mktemp -d)"; mkdir w

(sleep 600 | $SRV > srv.out 2> srv.err) &
SRVPID=$!
for i in $(seq 100); do [ -s srv.out ] && break; sleep 0.1; done
read ADDR NS < srv.out
export APL_TEMPORAL_ADDRESS=$ADDR APL_TEMPORAL_NAMESPACE=$NS
cat > pb.hcl <<'HCL'
playbook "m" {}
step "slow" {
  shell {
    script = <<-EOT
      if [ -f started ]; then exit 0; fi
      echo $$ > pid; touch started; sleep 30
    EOT
  }
}
HCL
now() { date +%s.%N; }
for round in 1 2 3; do
  rm -f w/started w/pid
  $APL worker --workdir w --name w1 --task-queue m$round > run.w.$round 2>&1 &
  W=$!
  for i in $(seq 200); do grep -q serving run.w.$round && break; sleep 0.05; done
  $APL run pb.hcl --engine temporal --task-queue m$round --run-id m$round > run.c.$round 2>&1 &
  C=$!
  for i in $(seq 400); do [ -f w/pid ] && break; sleep 0.05; done
  P=$(cat w/pid)
  t0=$(now); kill -9 $W
  while kill -0 $P 2>/dev/null; do sleep 0.02; done; t1=$(now)
  until grep -q "waits for worker w1" run.c.$round; do sleep 0.05; done; t2=$(now)
  $APL worker --workdir w --name w1 --task-queue m$round > run.w2.$round 2>&1 &
  W2=$!
  wait $C; t3=$(now)
  kill $W2; wait $W2 2>/dev/null
  echo "round $round: step processes gone $(echo "$t1-$t0"|bc)s; client says it waits $(echo "$t2-$t0"|bc)s; run done after restart $(echo "$t3-$t2"|bc)s"
done
kill $SRVPID
