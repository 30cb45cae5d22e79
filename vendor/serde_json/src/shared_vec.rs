//! A vector whose clones share their elements until one of them changes (copy on write); not
//! part of upstream serde_json (see `vendor/README.md` in the workspace).
//!
//! The small maps of `vec_map.rs` keep their entries in one. Its reference count is in the same
//! allocation as the elements (a header before them), so a vector costs the allocations a `Vec`
//! does; cloning one is an increment of that count; the first change through a clone copies the
//! elements into an allocation of its own. Dropping the last owner frees without an atomic
//! read-modify-write (an owner that sees a count of one is the only one, and no other can appear
//! while it is being dropped), so a vector that was never shared costs what a `Vec` costs.

use alloc::alloc::{alloc, dealloc, handle_alloc_error, realloc, Layout};
use core::fmt::{self, Debug};
use core::iter::FusedIterator;
use core::marker::PhantomData;
use core::mem;
use core::ops::Deref;
use core::ptr::{self, NonNull};
use core::slice;
use core::sync::atomic::{fence, AtomicUsize, Ordering};

/// What starts an allocation: how many vectors share it and how many elements it has room for.
#[repr(C)]
struct Header {
    refs: AtomicUsize,
    capacity: usize,
}

/// The fewest elements a vector that grows makes room for (as `Vec` does for elements of up to
/// a kilobyte).
const MIN_CAPACITY: usize = 4;

/// A vector of `T` shared between its clones until one changes.
pub(crate) struct SharedVec<T> {
    /// The allocation (a [`Header`], then room for `capacity` elements), `None` while empty
    /// without one.
    header: Option<NonNull<Header>>,
    /// How many elements are initialised. Every owner of an allocation has the same `len`: a
    /// vector changes only while it is the allocation's only owner.
    len: usize,
    marker: PhantomData<T>,
}

// SAFETY: a `SharedVec` owns its `T`s as a `Vec` does, except that clones on several threads read
// the same elements (so `T: Sync` for either) and the last owner, on any thread, drops them (so
// `T: Send` for either); the count is atomic.
unsafe impl<T: Send + Sync> Send for SharedVec<T> {}
// SAFETY: as above.
unsafe impl<T: Send + Sync> Sync for SharedVec<T> {}

impl<T> SharedVec<T> {
    /// An empty vector; allocates nothing.
    #[inline]
    pub(crate) const fn new() -> Self {
        SharedVec {
            header: None,
            len: 0,
            marker: PhantomData,
        }
    }

    /// An empty vector with room for `capacity` elements (none allocated for zero).
    #[inline]
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        let mut vec = Self::new();
        if capacity > 0 {
            vec.header = Some(Self::allocate(capacity));
        }
        vec
    }

    /// Where the elements start, from the start of the allocation.
    #[inline]
    const fn offset() -> usize {
        let header = mem::size_of::<Header>();
        let align = mem::align_of::<T>();
        (header + align - 1) / align * align
    }

    /// The layout of an allocation with room for `capacity` elements.
    fn layout(capacity: usize) -> Layout {
        let size = mem::size_of::<T>()
            .checked_mul(capacity)
            .and_then(|elements| elements.checked_add(Self::offset()))
            .filter(|size| *size <= isize::MAX as usize)
            .expect("capacity overflow");
        let align = mem::align_of::<Header>().max(mem::align_of::<T>());
        Layout::from_size_align(size, align).expect("capacity overflow")
    }

    /// A new allocation with room for `capacity` (> 0) elements and one owner.
    fn allocate(capacity: usize) -> NonNull<Header> {
        let layout = Self::layout(capacity);
        // SAFETY: the layout's size is at least the header's, so not zero.
        let raw = unsafe { alloc(layout) };
        let Some(header) = NonNull::new(raw.cast::<Header>()) else {
            handle_alloc_error(layout)
        };
        // SAFETY: the allocation is fresh, aligned for a `Header` and large enough for one.
        unsafe {
            header.as_ptr().write(Header {
                refs: AtomicUsize::new(1),
                capacity,
            });
        }
        header
    }

    #[inline]
    fn header(&self) -> Option<&Header> {
        // SAFETY: while a vector holds an allocation, its header is initialised and alive.
        self.header.map(|header| unsafe { &*header.as_ptr() })
    }

    /// How many elements the allocation has room for.
    #[inline]
    pub(crate) fn capacity(&self) -> usize {
        self.header().map_or(0, |header| header.capacity)
    }

    /// The first element's place (dangling, but aligned, without an allocation).
    #[inline]
    fn data(&self) -> *mut T {
        match self.header {
            // SAFETY: `offset()` is within the allocation (its size is at least that).
            Some(header) => unsafe { header.as_ptr().cast::<u8>().add(Self::offset()).cast() },
            None => NonNull::dangling().as_ptr(),
        }
    }

    /// The elements.
    #[inline]
    pub(crate) fn as_slice(&self) -> &[T] {
        // SAFETY: `data()` holds `len` initialised elements (or is dangling and `len` is 0).
        unsafe { slice::from_raw_parts(self.data(), self.len) }
    }

    /// Whether no other vector shares the allocation. The `Acquire` load orders this owner's
    /// changes after whatever other owners did before they let go.
    #[inline]
    pub(crate) fn is_unique(&self) -> bool {
        self.header()
            .map_or(true, |header| header.refs.load(Ordering::Acquire) == 1)
    }

    /// The address of the allocation, `None` without one.
    #[inline]
    pub(crate) fn allocation(&self) -> Option<usize> {
        self.header.map(|header| header.as_ptr() as usize)
    }

    /// Whether both vectors share one allocation.
    #[inline]
    pub(crate) fn shares_allocation(&self, other: &Self) -> bool {
        matches!((self.header, other.header), (Some(a), Some(b)) if a == b)
    }

    /// Makes room for `additional` more elements in an allocation of this vector's own.
    fn reserve(&mut self, additional: usize)
    where
        T: Clone,
    {
        let needed = self.len.checked_add(additional).expect("capacity overflow");
        let capacity = self.capacity();
        if !self.is_unique() {
            let mut copy = Self::with_capacity(needed.max(capacity).max(MIN_CAPACITY));
            for element in self.as_slice() {
                // SAFETY: `copy` is unique, with room for every element of `self`.
                unsafe { copy.push_unchecked(element.clone()) };
            }
            *self = copy;
        } else if needed > capacity {
            self.grow(needed.max(capacity * 2).max(MIN_CAPACITY));
        }
    }

    /// Moves a unique vector's elements to an allocation with room for `capacity` (more than
    /// now).
    fn grow(&mut self, capacity: usize) {
        debug_assert!(self.is_unique() && capacity > self.capacity());
        let header = match self.header {
            None => Self::allocate(capacity),
            Some(header) => {
                let old = Self::layout(self.capacity());
                let new = Self::layout(capacity);
                // SAFETY: the allocation was made with `old` (same alignment as `new`); `new`'s
                // size is not zero. Nobody else holds it (unique), so moving it is safe.
                let raw = unsafe { realloc(header.as_ptr().cast(), old, new.size()) };
                let Some(header) = NonNull::new(raw.cast::<Header>()) else {
                    handle_alloc_error(new)
                };
                // SAFETY: the header moved with the elements and is still initialised.
                unsafe { (*header.as_ptr()).capacity = capacity };
                header
            }
        };
        self.header = Some(header);
    }

    /// Appends `element`.
    ///
    /// # Safety
    /// The vector is unique and has room for one more element.
    #[inline]
    unsafe fn push_unchecked(&mut self, element: T) {
        debug_assert!(self.is_unique() && self.len < self.capacity());
        // SAFETY: the caller promises room at `len`.
        unsafe { self.data().add(self.len).write(element) };
        self.len += 1;
    }

    /// The elements, for a change: copied first when another vector shares them.
    #[inline]
    pub(crate) fn make_mut(&mut self) -> &mut [T]
    where
        T: Clone,
    {
        if !self.is_unique() {
            self.reserve(0);
        }
        // SAFETY: unique now, so nobody else reads these elements.
        unsafe { slice::from_raw_parts_mut(self.data(), self.len) }
    }

    /// Inserts `element` at `index`, moving the elements after it; panics if `index > len`.
    pub(crate) fn insert(&mut self, index: usize, element: T)
    where
        T: Clone,
    {
        assert!(index <= self.len, "insertion index out of bounds");
        if self.len == self.capacity() || !self.is_unique() {
            self.reserve(1);
        }
        // SAFETY: unique with room for one more; the moved range is within the elements.
        unsafe {
            let at = self.data().add(index);
            ptr::copy(at, at.add(1), self.len - index);
            at.write(element);
        }
        self.len += 1;
    }

    /// Removes and returns the element at `index`; panics if `index >= len`.
    pub(crate) fn remove(&mut self, index: usize) -> T
    where
        T: Clone,
    {
        assert!(index < self.len, "removal index out of bounds");
        self.make_mut();
        // SAFETY: unique; `index` is an initialised element, read once and its place filled
        // by the ones after it before `len` shrinks.
        unsafe {
            let at = self.data().add(index);
            let element = at.read();
            ptr::copy(at.add(1), at, self.len - index - 1);
            self.len -= 1;
            element
        }
    }

    /// Keeps the elements `keep` holds to, in order (as `Vec::retain_mut`).
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&mut T) -> bool)
    where
        T: Clone,
    {
        let elements = self.make_mut();
        let mut kept = 0;
        for i in 0..elements.len() {
            if keep(&mut elements[i]) {
                elements.swap(kept, i);
                kept += 1;
            }
        }
        // What was not kept is at the end; a panic in `keep` left every element in place.
        let len = self.len;
        self.len = kept;
        // SAFETY: `kept..len` are initialised and no longer counted, so dropped once.
        unsafe {
            ptr::drop_in_place(slice::from_raw_parts_mut(self.data().add(kept), len - kept));
        }
    }

    /// Drops the elements and frees the allocation of a vector whose last owner this is.
    ///
    /// # Safety
    /// No other vector shares the allocation.
    unsafe fn free(&mut self) {
        let Some(header) = self.header.take() else {
            return;
        };
        let len = mem::replace(&mut self.len, 0);
        // SAFETY: the only owner; `data()` of the taken allocation holds `len` elements.
        unsafe {
            let data = header.as_ptr().cast::<u8>().add(Self::offset()).cast::<T>();
            let layout = Self::layout((*header.as_ptr()).capacity);
            ptr::drop_in_place(slice::from_raw_parts_mut(data, len));
            dealloc(header.as_ptr().cast(), layout);
        }
    }
}

impl<T> Default for SharedVec<T> {
    #[inline]
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Deref for SharedVec<T> {
    type Target = [T];

    #[inline]
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T> Clone for SharedVec<T> {
    /// Another owner of the same elements.
    #[inline]
    fn clone(&self) -> Self {
        if let Some(header) = self.header() {
            // As `Arc::clone`: a new owner needs no ordering with the others (this one keeps
            // the elements alive); a count near overflow means leaked clones, so abort.
            let before = header.refs.fetch_add(1, Ordering::Relaxed);
            if before > isize::MAX as usize {
                panic!("SharedVec reference count overflow");
            }
        }
        SharedVec {
            header: self.header,
            len: self.len,
            marker: PhantomData,
        }
    }
}

impl<T> Drop for SharedVec<T> {
    fn drop(&mut self) {
        let Some(header) = self.header() else {
            return;
        };
        // The only owner frees without touching the count; otherwise as `Arc`'s drop: the
        // `Release` decrement publishes this owner's reads, the last owner's `Acquire` fence
        // sees everyone's before it drops the elements.
        if header.refs.load(Ordering::Acquire) != 1 {
            if header.refs.fetch_sub(1, Ordering::Release) != 1 {
                return;
            }
            fence(Ordering::Acquire);
        }
        // SAFETY: the count was one (ours), so nobody else holds the allocation.
        unsafe { self.free() }
    }
}

impl<T: Debug> Debug for SharedVec<T> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.as_slice().fmt(f)
    }
}

impl<T: Clone> FromIterator<T> for SharedVec<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut iter = iter.into_iter();
        let (lower, upper) = iter.size_hint();
        let mut vec = Self::with_capacity(lower);
        if upper == Some(lower) {
            // A known length (a vector's drain, say): the elements go straight to their places,
            // with no check of room between them.
            let data = vec.data();
            let mut len = 0;
            iter.by_ref().take(lower).for_each(|element| {
                // SAFETY: made here with room for `lower` elements; `len < lower`.
                unsafe { data.add(len).write(element) };
                len += 1;
            });
            vec.len = len;
        }
        // Whatever the hint left out goes on the end as an insertion does (same growth).
        for element in iter {
            let end = vec.len;
            vec.insert(end, element);
        }
        vec
    }
}

impl<T: Clone> IntoIterator for SharedVec<T> {
    type Item = T;
    type IntoIter = IntoIter<T>;

    /// Moves the elements out; copies them first when another vector shares them.
    fn into_iter(mut self) -> IntoIter<T> {
        if !self.is_unique() {
            self.reserve(0);
        }
        let end = self.len;
        IntoIter {
            vec: mem::ManuallyDrop::new(self),
            start: 0,
            end,
        }
    }
}

/// The elements of a [`SharedVec`], moved out.
pub(crate) struct IntoIter<T> {
    /// The vector, unique, whose elements `start..end` are still to be moved out (its `len` is
    /// where they ended when the iteration began).
    vec: mem::ManuallyDrop<SharedVec<T>>,
    start: usize,
    end: usize,
}

// SAFETY: the iterator owns its vector uniquely, as a `vec::IntoIter` owns its buffer.
unsafe impl<T: Send> Send for IntoIter<T> {}
// SAFETY: as above; it hands out no references.
unsafe impl<T: Sync> Sync for IntoIter<T> {}

impl<T> IntoIter<T> {
    /// The elements not moved out yet.
    fn remaining(&self) -> &[T] {
        // SAFETY: `start..end` are initialised elements the iterator still owns.
        unsafe { slice::from_raw_parts(self.vec.data().add(self.start), self.end - self.start) }
    }
}

impl<T> Iterator for IntoIter<T> {
    type Item = T;

    #[inline]
    fn next(&mut self) -> Option<T> {
        if self.start == self.end {
            return None;
        }
        // SAFETY: `start` is an element not yet moved out; it is not read again.
        let element = unsafe { self.vec.data().add(self.start).read() };
        self.start += 1;
        Some(element)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.end - self.start;
        (n, Some(n))
    }
}

impl<T> DoubleEndedIterator for IntoIter<T> {
    #[inline]
    fn next_back(&mut self) -> Option<T> {
        if self.start == self.end {
            return None;
        }
        self.end -= 1;
        // SAFETY: `end` is an element not yet moved out; it is not read again.
        Some(unsafe { self.vec.data().add(self.end).read() })
    }
}

impl<T> ExactSizeIterator for IntoIter<T> {}

impl<T> FusedIterator for IntoIter<T> {}

impl<T> Drop for IntoIter<T> {
    fn drop(&mut self) {
        // The elements not moved out are dropped, then the allocation freed (the vector's
        // `len` is set so that only those are).
        let (start, end) = (self.start, self.end);
        // SAFETY: `start..end` are the elements still owned; moving them to the front makes
        // `0..end - start` the vector's elements, which `free` drops once.
        unsafe {
            let data = self.vec.data();
            ptr::copy(data.add(start), data, end - start);
            self.vec.len = end - start;
            self.vec.free();
        }
    }
}

impl<T: Debug> Debug for IntoIter<T> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.debug_tuple("IntoIter").field(&self.remaining()).finish()
    }
}
