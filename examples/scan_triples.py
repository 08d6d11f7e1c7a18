def scan_triples(xs):
    for i in range(len(xs) - 2):
        if xs[i] <= xs[i + 1] <= xs[i + 2]:
            return i
    return -1
