//! What the fold keeps of an input (an item, a turn's terminal params): its own box, or the
//! input it came in, when the caller shares that input with the fold (a client hands the
//! same input out as an event), so that keeping it copies nothing.

use std::fmt;
use std::sync::Arc;

use crate::fold::Input;

/// Finds the kept value in its input.
pub(crate) type Find<T> = fn(&Input) -> Option<&T>;

pub(crate) enum Kept<T: 'static> {
    Owned(Box<T>),
    /// An input `Find` finds the value in (checked by [`Kept::shared`]).
    Shared(Arc<Input>, Find<T>),
}

impl<T> Kept<T> {
    /// The value `find` finds in `input`, kept where it is; `input` back when it finds none.
    pub(crate) fn shared(input: Arc<Input>, find: Find<T>) -> Result<Self, Arc<Input>> {
        match find(&input) {
            Some(_) => Ok(Kept::Shared(input, find)),
            None => Err(input),
        }
    }

    pub(crate) fn get(&self) -> &T {
        match self {
            Kept::Owned(value) => value,
            Kept::Shared(input, find) => {
                find(input).expect("a shared value is kept only where its input holds it")
            }
        }
    }

    /// The value to change: a shared one is copied out first.
    pub(crate) fn make_mut(&mut self) -> &mut T
    where
        T: Clone,
    {
        if let Kept::Shared(..) = self {
            *self = Kept::Owned(Box::new(self.get().clone()));
        }
        match self {
            Kept::Owned(value) => value,
            Kept::Shared(..) => unreachable!("made owned above"),
        }
    }
}

impl<T: Clone> Clone for Kept<T> {
    fn clone(&self) -> Self {
        match self {
            Kept::Owned(value) => Kept::Owned(value.clone()),
            Kept::Shared(input, find) => Kept::Shared(Arc::clone(input), *find),
        }
    }
}

impl<T: PartialEq> PartialEq for Kept<T> {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl<T: fmt::Debug> fmt::Debug for Kept<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.get().fmt(f)
    }
}
