//! Per-scheme statistics (`struct damos_stat`, spec E.9) and `damos_update_stat`.

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DamosStat {
    pub nr_tried: u64,
    pub sz_tried: u64,
    pub nr_applied: u64,
    pub sz_applied: u64,
    pub sz_ops_filter_passed: u64,
    pub qt_exceeds: u64,
}

/// `damos_update_stat(s, sz_tried, sz_applied, sz_ops_filter_passed)`.
pub fn damos_update_stat(st: &mut DamosStat, sz_tried: u64, sz_applied: u64, sz_ops_filter_passed: u64) {
    st.nr_tried += 1;
    st.sz_tried += sz_tried;
    if sz_applied != 0 {
        st.nr_applied += 1;
    }
    st.sz_applied += sz_applied;
    st.sz_ops_filter_passed += sz_ops_filter_passed;
}
