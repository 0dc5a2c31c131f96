import json, sys, numpy as np
from scipy.optimize import milp, LinearConstraint, Bounds
from scipy.sparse import lil_matrix
for line in open(sys.argv[1]):
    d = json.loads(line)
    cols = d["cols"]; m = max(max(c) for c in cols) + 1
    A = lil_matrix((m, len(cols)))
    for j, c in enumerate(cols):
        for i in c: A[i, j] = 1
    A = A.tocsr()
    rows = np.asarray(A.sum(axis=1)).ravel() > 0
    A = A[rows]
    r = milp(np.ones(len(cols)), constraints=LinearConstraint(A, lb=1, ub=np.inf), integrality=np.ones(len(cols)), bounds=Bounds(0, 1), options={"time_limit": 20})
    lp = milp(np.ones(len(cols)), constraints=LinearConstraint(A, lb=1, ub=np.inf), bounds=Bounds(0, 1))
    print(d["current"], len(cols), round(r.fun) if r.x is not None else None, round(lp.fun, 2), r.status)
