// Input items as monoid values, after the input items' section (r_in, m_lift) of every family.

// x, item i of the input, as a value: m_lift(x, i) when LIFT (the call's items), else x itself
// (monoid values, as a later pass of a multi-pass kernel reads them).
template <typename T, bool LIFT>
__device__ __forceinline__ M r_item_value(const T& x, r_size i) {
    if constexpr (LIFT) return m_lift(x, i);
    else return x;
}
