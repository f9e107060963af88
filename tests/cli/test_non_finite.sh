#!/usr/bin/env bash
# The rule for non-finite operands (doc/errors.md "Errors", doc/design.md §6.6): every program
# refuses an input holding NaN or Inf, before any work, with exit 1 and one line naming the
# input and its first non-finite element in C order, as numpy finds it here:
# triada-transform's --input (np 1, 2 and 4: the first of the whole tensor, whichever rank's
# brick holds it), --initial and gemt's coefficients; triada-conv's --input and --weights;
# triada-tcu's matrices, vectors and complex vectors. No output appears.
set -euo pipefail

# shellcheck source=tests/cli/lib_check.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib_check.sh"

in_scratch_dir non-finite

# Each file holds its non-finite values; want.txt: NAME WHERE VALUE, the first in C order.
"$PYTHON" - <<'EOF'
import h5py, numpy as np
rng = np.random.default_rng(5)
want = []

def put(file, dset, a, name):  # writes a; want.txt gets NAME|(i, j, ...)|VALUE
    with h5py.File(file, 'a') as f:
        f[dset] = a
    flat = np.flatnonzero(~np.isfinite(a.reshape(-1)))
    if len(flat):
        at = np.unravel_index(flat[0], a.shape)
        v = a.reshape(-1)[flat[0]]
        text = (f"({float(v.real)!r}, {float(v.imag)!r})" if np.iscomplexobj(v)
                else repr(float(v)))
        want.append(f"{name}|({', '.join(str(int(i)) for i in at)})|{text}")

x = rng.standard_normal((6, 5, 4))
x[5, 4, 3], x[4, 0, 0], x[0, 4, 3], x[2, 3, 1] = np.nan, np.inf, -np.inf, np.nan
put('x.h5', 'x', x, 'x')
put('good.h5', 'x', rng.standard_normal((6, 5, 4)), 'good')
y0 = rng.standard_normal((6, 5, 4))
y0[3, 2, 1] = np.inf
put('y0.h5', 'y', y0, 'y0')
for k, n in ((1, 6), (2, 5), (3, 4)):
    c = np.eye(n)
    if k == 2:
        c[1, 3] = -np.inf
    put('c.h5', f'C{k}', c, f'C{k}')
img = rng.standard_normal((1, 3, 8, 8))
img[0, 2, 7, 7], img[0, 1, 2, 3] = np.inf, np.nan
put('img.h5', 'x', img, 'img')
w = rng.standard_normal((4, 3, 3, 3))
w[3, 2, 1, 0] = -np.inf
put('w.h5', 'w', w, 'w')
a, b = rng.standard_normal((8, 8)), rng.standard_normal((8, 8))
b[2, 1], b[6, 0] = np.inf, np.nan
put('ab.h5', 'A', a, 'A')
put('ab.h5', 'B', b, 'B')
v = rng.standard_normal(16) + 1j * rng.standard_normal(16)
v[5] = complex(0.5, np.nan)
put('v.h5', 'x', v, 'v')
put('ge.h5', 'A', np.eye(6) * 4 + rng.uniform(-1, 1, (6, 6)), 'geA')
bb = rng.standard_normal(6)
bb[4] = np.nan
put('ge.h5', 'b', bb, 'b')
open('want.txt', 'w').write('\n'.join(want) + '\n')
EOF

# refused NAME INPUT KEY NP PROGRAM ARGS...: exit 1, one error line "INPUT: element WHERE is
# VALUE; non-finite values are refused" (WHERE and VALUE: want.txt's line KEY), no output.
refused() {
  local name=$1 input=$2 where value
  IFS="|" read -r _ where value < <(grep "^$3|" want.txt)
  shift 3
  rm -f out.h5 r.json
  run_np "$@"
  local line="$input: element $where is $value; non-finite values are refused"
  if [[ $rc -eq 1 && $(grep -c "error" err.txt) -eq 1 ]] && grep -qF "error: $line" err.txt &&
    [[ ! -e out.h5 && ! -e r.json ]]; then
    pass
    echo "ok   $name"
  else
    fail "$name: rc=$rc, expected 1 and one line '$line': $(head -c 400 err.txt)"
  fi
}

T="$TRIADA_BIN/triada-transform"
for np in 1 2 4; do
  refused "transform --input, np $np" x.h5:/x x "$np" "$T" -i x.h5 -o out.h5 -t dft -q
done
refused "transform --initial" y0.h5:/y y0 2 "$T" -i good.h5 -o out.h5 -t dct -q --initial y0.h5
refused "transform gemt /C2" c.h5:/C2 C2 1 "$T" -i good.h5 -o out.h5 -t gemt --coeffs c.h5 -q

C="$TRIADA_BIN/triada-conv"
refused "conv --input" "--input img.h5" img 1 "$C" --layer 1,3,8,8,4,3,3,1,1 --latency 1 \
  --input img.h5 --report r.json
refused "conv --weights" "--weights w.h5" w 1 "$C" --layer 1,3,8,8,4,3,3,1,1 --latency 1 \
  --weights w.h5 --report r.json

U="$TRIADA_BIN/triada-tcu"
for algo in matmul strassen spmm; do
  refused "tcu $algo /B" ab.h5:/B B 1 "$U" --algo "$algo" --m 4 --latency 1 --input ab.h5 \
    --report r.json
done
refused "tcu dft, a complex vector" v.h5:/x v 1 "$U" --algo dft --m 4 --latency 1 --input v.h5 \
  --report r.json
refused "tcu ge /b" ge.h5:/b b 1 "$U" --algo ge --m 4 --latency 1 --input ge.h5 --report r.json

summary
