//! A directed graph's cycle, found by iterative depth-first search: what the deadlock checks
//! (a channel dependency graph at build time, a wait-for graph of full buffers at run time)
//! look for.

/// A cycle of the graph on nodes `0..nodes` whose edges `successors` gives, as the nodes in
/// order, if there is one.
pub fn find_cycle(
    nodes: usize,
    mut successors: impl FnMut(usize) -> Vec<usize>,
) -> Option<Vec<usize>> {
    // 0 unseen, 1 on the path, 2 done.
    let mut colour = vec![0u8; nodes];
    for start in 0..nodes {
        if colour[start] != 0 {
            continue;
        }
        colour[start] = 1;
        let mut path: Vec<(usize, Vec<usize>)> = vec![(start, successors(start))];
        while let Some((node, next)) = path.last_mut() {
            match next.pop() {
                Some(n) if colour[n] == 1 => {
                    let at = path.iter().position(|(m, _)| *m == n).expect("on the path");
                    return Some(path[at..].iter().map(|(m, _)| *m).collect());
                }
                Some(n) if colour[n] == 0 => {
                    colour[n] = 1;
                    let after = successors(n);
                    path.push((n, after));
                }
                Some(_) => {}
                None => {
                    colour[*node] = 2;
                    path.pop();
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::find_cycle;

    #[test]
    fn finds_a_cycle_and_only_a_cycle() {
        // 0 -> 1 -> 2 -> 3 -> 1, and 4 alone.
        let edges = |n: usize| match n {
            0 => vec![1],
            1 => vec![2],
            2 => vec![3],
            3 => vec![1],
            _ => vec![],
        };
        assert_eq!(find_cycle(5, edges), Some(vec![1, 2, 3]));
        // A diamond has no cycle.
        let diamond = |n: usize| match n {
            0 => vec![1, 2],
            1 | 2 => vec![3],
            _ => vec![],
        };
        assert_eq!(find_cycle(4, diamond), None);
    }
}
