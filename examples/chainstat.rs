use fanorona::*;
fn main() {
    // histogram of chain lengths among leaf moves at 5x9 depth 6
    let mut hist = [0u64; 20];
    fn rec(p: &Position, d: u32, hist: &mut [u64; 20]) {
        if d == 0 { return; }
        for m in legal_moves(p) {
            if d == 1 { let l = if m.is_capture() { m.path().len() } else { 0 }; hist[l] += 1; }
            else { rec(&m.apply(p), d - 1, hist); }
        }
    }
    rec(&Position::initial(Board::STANDARD), 6, &mut hist);
    println!("{:?}", hist);
}
