//! What the fold keeps of an input (an item, a turn's terminal params): its own box, or the
//! input it came in, when the caller shares that input with the fold (a client hands the
//! same input out as an event), so that keeping it copies nothing.

use std::fmt;
use std::sync::Arc;

use crate::fold::Input;

/// Finds the kept value in its input.
pub(crate) type Find<T> = fn(&Input) -> Option<&T>;

/// Takes the kept value out of its input; the input back when it holds none.
pub(crate) type Take<T> = fn(Input) -> Result<Box<T>, Input>;

pub(crate) struct Kept<T: 'static>(Repr<T>);

enum Repr<T: 'static> {
    Owned(Box<T>),
    /// An input `Find` finds the value in (checked by [`Kept::shared`], the only way in).
    Shared(Arc<Input>, Find<T>),
}

impl<T> Kept<T> {
    pub(crate) fn owned(value: Box<T>) -> Self {
        Kept(Repr::Owned(value))
    }

    /// The value `find` finds in `input`, kept where it is; `input` back when it finds none.
    pub(crate) fn shared(input: Arc<Input>, find: Find<T>) -> Result<Self, Arc<Input>> {
        match find(&input) {
            Some(_) => Ok(Kept(Repr::Shared(input, find))),
            None => Err(input),
        }
    }

    pub(crate) fn get(&self) -> &T {
        match &self.0 {
            Repr::Owned(value) => value,
            Repr::Shared(input, find) => {
                find(input).expect("a shared value is kept only where its input holds it")
            }
        }
    }

    /// The value when the fold owns it; itself when it is shared.
    pub(crate) fn into_owned(self) -> Result<Box<T>, Self> {
        match self.0 {
            Repr::Owned(value) => Ok(value),
            shared => Err(Kept(shared)),
        }
    }

    /// Whether it is kept in an input shared with the caller.
    pub(crate) fn is_shared(&self) -> bool {
        matches!(self.0, Repr::Shared(..))
    }

    /// Takes the value out of its input once nobody else holds that input (the event that
    /// shared it was dropped), so that the rest of the input is freed now rather than with
    /// the value. `false` while the input is still shared.
    pub(crate) fn unshare(&mut self, take: Take<T>) -> bool {
        let Repr::Shared(shared, _) = &mut self.0 else {
            return true;
        };
        let Some(input) = Arc::get_mut(shared) else {
            return false;
        };
        // Nobody else can see the input: it is taken apart in place.
        let input = std::mem::replace(input, Input::placeholder());
        match take(input) {
            Ok(value) => self.0 = Repr::Owned(value),
            Err(input) => {
                if let Some(place) = Arc::get_mut(shared) {
                    *place = input;
                }
            }
        }
        true
    }

    /// The value to change: a shared one is copied out first (the input is never changed).
    pub(crate) fn make_mut(&mut self) -> &mut T
    where
        T: Clone,
    {
        if let Repr::Shared(..) = self.0 {
            self.0 = Repr::Owned(Box::new(self.get().clone()));
        }
        match &mut self.0 {
            Repr::Owned(value) => value,
            Repr::Shared(..) => unreachable!("made owned above"),
        }
    }
}

impl<T: Clone> Clone for Kept<T> {
    fn clone(&self) -> Self {
        Kept(match &self.0 {
            Repr::Owned(value) => Repr::Owned(value.clone()),
            Repr::Shared(input, find) => Repr::Shared(Arc::clone(input), *find),
        })
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
